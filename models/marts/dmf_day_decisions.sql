{#- The one answer to "which load decides this day": the date's latest load attempt (by
    finished_at, then load_id), with its verdict, status and why. Every reader of a day's verdict
    (the `dmf` command, the ground truth, enrich, the reports, the daily summary, the report test
    fixture) selects from here instead of ordering dmf_loads itself. It depends on dmf_loads only,
    never on the gated models, so it is current on the very run whose gate rejects the day. -#}

with

loads as (

    select * from {{ ref('dmf_loads') }}

),

ranked as (

    select
        *,
        row_number() over (
            partition by as_of_date order by finished_at desc nulls last, load_id desc
        ) as attempt_rank,
        count(*) over (partition by as_of_date) as attempt_count

    from loads

),

day_decisions as (

    select
        as_of_date,
        load_id,
        verdict,
        load_status,
        reason,
        rejected_gates,
        is_baseline,
        previous_accepted_load_id,
        previous_accepted_as_of,
        fetch_status,
        decision,
        finished_at,
        attempt_count

    from ranked
    where attempt_rank = 1

)

select * from day_decisions
