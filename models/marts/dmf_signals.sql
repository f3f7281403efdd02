{#- Signals of the loads in the sequence, plus those recorded when a gate rejected a load (so a
    rejected day still shows which gate fired, against what). -#}

with

current_signals as (

    select * from {{ ref('int_load_signals') }}

),

recorded_rejections as (

    select * from {{ ref('stg_mfds__rejected_load_signals') }}

),

catalog as (

    select * from {{ ref('int_signal_catalog_rendered') }}

),

signals as (

    select
        {{ signal_column_list() }}
        -- a gate firing on this very build: the load is rejected (its on-run-end hook records it)
        coalesce(bool_or(is_gate and fired and not accepted_by_person) over (partition by load_id), false)
            as load_rejected

    from current_signals

    union all

    select
        {{ signal_column_list() }}
        true as load_rejected

    from recorded_rejections
    -- a load a person accepted after its gate fired is back in the sequence: show it once
    where load_id not in (select load_id from current_signals)

),

described as (

    select
        signals.*,
        catalog.description_ko,
        catalog.what_to_check_ko

    from signals
    left join catalog
        on signals.signal_id = catalog.signal_id

)

select * from described
