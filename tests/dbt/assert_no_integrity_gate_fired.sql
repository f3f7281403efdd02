{{ config(severity='error') }}
{#- The integrity gates (is_gate in seed signal_catalog: total_count_drop, zero_records, all_changed,
    withdrawn_share, identity_churn, field_fill_collapse). A row here means the
    load named in it must not become events: this failure makes `dbt build` skip every model
    that publishes them, and the on-run-end hook record_fired_gates (macros/gate_rejections.sql)
    records the load as rejected, under plain `dbt build` as under `dmf build`.
    The test also depends on int_loads_accepted, which every model that publishes events reads:
    dbt skips after a failed test only the models downstream of all of its parents, so those are
    skipped, while dmf_loads and dmf_day_decisions (downstream of int_load_signals alone) are built
    and say the load is rejected on this very build. -#}
-- depends_on: {{ ref('int_loads_accepted') }}

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
