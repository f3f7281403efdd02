{#- One row per load attempt with its final verdict: accepted when the fetch was complete and
    no integrity gate rejected it (or a person accepted it after one did), rejected otherwise
    (with the reason and a one-word load_status); a person's latest decision on the load is carried
    along. Which load decides a day is dmf_day_decisions' question, not this model's. -#}

with

load_runs as (

    select * from {{ ref('stg_mfds__load_runs') }}

),

sequence as (

    select * from {{ ref('int_loads_sequenced') }}

),

decisions as (

    select * from {{ ref('int_load_decisions') }}

),

recorded_gate_signals as (

    select * from {{ ref('stg_mfds__rejected_load_signals') }}

),

current_signals as (

    select * from {{ ref('int_load_signals') }}

),

fired_gate_signals as (

    {#- The gates that fired on a load: recorded when a build rejected it, or firing in this very
        build (the gate test fails, and its on-run-end hook records them after the build), so the
        verdict is the same on the build whose gate fires as on every build after it. -#}
    select load_id, signal_id, observed, baseline_text
    from recorded_gate_signals
    where is_gate and fired

    union all

    select load_id, signal_id, observed, baseline_text
    from current_signals
    where is_gate and fired and not accepted_by_person
        and load_id not in (select load_id from recorded_gate_signals)

),

gate_rejections as (

    select
        load_id,
        string_agg(signal_id, ',' order by {{ bytewise('signal_id') }}) as rejected_gates,
        string_agg(
            signal_id || ': observed ' || coalesce({{ double_text('observed') }}, '-') || ' (' || baseline_text || ')',
            '; ' order by {{ bytewise('signal_id') }}
        ) as gate_reason

    from fired_gate_signals
    group by load_id

),

previous_accepted as (

    select
        load_runs.load_id,
        max(sequence.as_of_date) as previous_accepted_as_of

    from load_runs
    inner join sequence
        on load_runs.as_of_date > sequence.as_of_date
    group by load_runs.load_id

),

loads as (

    select
        load_runs.load_id,
        load_runs.as_of_date,
        case
            when load_runs.is_usable and sequence.load_id is not null
                and (gate_rejections.load_id is null or decisions.decision = 'accept') then 'accepted'
            else 'rejected'
        end as verdict,
        case
            when load_runs.fetch_status <> 'complete' then load_runs.fetch_status || ': ' || load_runs.reason
            when decisions.decision = 'reject' and load_runs.is_usable
                then 'rejected by ' || decisions.decided_by || ': ' || decisions.decision_reason
            when decisions.decision = 'accept' and gate_rejections.load_id is not null and sequence.load_id is not null
                then null
            when not load_runs.is_usable
                then 'incomplete: only ' || load_runs.stored_item_count || ' of '
                    || load_runs.distinct_count || ' records were stored (the load was cut short while writing)'
            when gate_rejections.load_id is not null then 'integrity gate: ' || gate_rejections.gate_reason
            when sequence.load_id is null then 'superseded by a later complete load of the same date'
        end as reason,
        case
            when load_runs.is_usable and sequence.load_id is not null
                and (gate_rejections.load_id is null or decisions.decision = 'accept')
                then case when sequence.is_baseline then 'baseline' else 'accepted' end
            when not coalesce(load_runs.is_usable, false) then 'incomplete'
            when decisions.decision = 'reject' then 'rejected_by_person'
            when gate_rejections.load_id is not null then 'rejected_by_gate'
            else 'superseded'
        end as load_status,
        gate_rejections.rejected_gates,
        coalesce(sequence.is_baseline, false) as is_baseline,
        previous_sequence.load_id as previous_accepted_load_id,
        previous_accepted.previous_accepted_as_of,
        load_runs.fetch_status,
        load_runs.total_count,
        load_runs.fetched_count,
        load_runs.distinct_count,
        load_runs.duplicate_count,
        load_runs.pages,
        load_runs.requests,
        load_runs.retries,
        load_runs.attempts,
        load_runs.duration_s,
        load_runs.started_at,
        load_runs.finished_at,
        load_runs.attempt_order,
        load_runs.schema_drift,
        decisions.decision,
        decisions.decided_by,
        decisions.decision_reason,
        decisions.decided_at

    from load_runs
    left join gate_rejections
        on load_runs.load_id = gate_rejections.load_id
    left join sequence
        on load_runs.load_id = sequence.load_id
    left join decisions
        on load_runs.load_id = decisions.load_id
    left join previous_accepted
        on load_runs.load_id = previous_accepted.load_id
    left join sequence as previous_sequence
        on previous_accepted.previous_accepted_as_of = previous_sequence.as_of_date

)

select * from loads
