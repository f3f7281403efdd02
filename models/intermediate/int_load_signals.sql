{#- The integrity signals of SPEC §5, one row per signal per load of the sequence. SQL alone
    decides them; gates (is_gate in seed signal_catalog) are enforced by the test
    assert_no_integrity_gate_fired, which stops every model that publishes events, except for a
    load a person accepted after its gate fired (accepted_by_person: signals still shown). -#}

with

metrics as (

    select * from {{ ref('int_load_metrics') }}

),

context as (

    select * from {{ ref('int_load_event_context') }}

),

catalog as (

    select * from {{ ref('int_signal_catalog_rendered') }}

),

observations as (

    -- one family of signals a file (models/intermediate/signals/)
    select * from {{ ref('int_signals__volume') }}
    union all
    select * from {{ ref('int_signals__fields') }}
    union all
    select * from {{ ref('int_signals__quarantine') }}
    union all
    select * from {{ ref('int_signals__identity') }}
    union all
    select * from {{ ref('int_signals__fetch') }}

),

windows as (

    select
        load_id,
        coalesce(cast(previous_as_of_date as varchar), '-') || ' → ' || cast(as_of_date as varchar) as previous_window,
        (
            cast(cast({{ dbt.dateadd('day', -var('history_window_days'), 'as_of_date') }} as date) as varchar)
            || ' ~ ' || cast(cast({{ dbt.dateadd('day', -1, 'as_of_date') }} as date) as varchar)
        ) as trailing_window

    from metrics

),

signals as (

    select
        observations.load_id,
        observations.as_of_date,
        observations.signal_id,
        catalog.is_gate,
        coalesce(observations.fired, false) as fired,
        catalog.severity,
        observations.observed,
        observations.baseline,
        observations.baseline_text,
        case
            when observations.signal_id in ('event_burst', 'withdrawn_burst', 'slow_fetch') then windows.trailing_window
            else windows.previous_window
        end as window_text,
        cast(context.context as varchar) as context,
        catalog.description || '. ' || catalog.what_to_check as description,
        metrics.accepted_by_person

    from observations
    inner join catalog
        on observations.signal_id = catalog.signal_id
    left join context
        on observations.load_id = context.load_id
    inner join windows
        on observations.load_id = windows.load_id
    inner join metrics
        on observations.load_id = metrics.load_id

)

select * from signals
