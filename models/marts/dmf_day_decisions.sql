{#- The one answer to "which load decides this day". A published day stays published: when the
    date has an accepted load, that load decides it, whatever later attempts of the date did
    (failed, refused, forced); otherwise the date's latest attempt does, with its verdict and why.
    "Latest" is the warehouse's order of attempts (attempt_order), never a clock. Every reader of a
    day's verdict (the `dmf` command, the ground truth, enrich, the reports, notify, the daily
    summary, the report test fixture) selects from here instead of ordering dmf_loads itself. It
    depends on dmf_loads only, never on the gated models, so it is current on the very run whose
    gate rejects the day. -#}

with

loads as (

    select * from {{ ref('dmf_loads') }}

),

ranked as (

    select
        *,
        row_number() over (
            partition by as_of_date
            order by case when verdict = 'accepted' then 1 else 0 end desc, attempt_order desc
        ) as decider_rank,
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
        attempt_order,
        attempt_count

    from ranked
    where decider_rank = 1

)

select * from day_decisions
