{{ config(severity='error') }}
{#- The integrity gates (is_gate in seed signal_catalog: total_count_drop, zero_records, all_changed,
    withdrawn_share, identity_churn, field_fill_collapse). A row here means the
    load named in it must not become events: this failure makes `dbt build` skip every model
    that publishes them, and `dmf build` records the load as rejected
    (`dbt run-operation record_gate_rejections`). -#}

select
    load_id,
    as_of_date,
    signal_id,
    observed,
    baseline,
    baseline_text,
    (
        'integrity gate ' || signal_id || ' rejected load ' || load_id || ' of ' || cast(as_of_date as varchar)
        || ': observed ' || coalesce(cast(observed as varchar), '-') || ' (' || baseline_text || ')'
    ) as problem

from {{ ref('int_load_signals') }}
where is_gate and fired
    and not accepted_by_person  -- `dmf accept-load`: a person checked it against the MFDS site
