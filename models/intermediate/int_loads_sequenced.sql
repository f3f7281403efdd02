{#- The loads that can take part in the history: complete with every item row stored, not rejected
    by a gate earlier (unless a person accepted it since) nor by a person, and the date's latest such
    load in the warehouse's order of attempts (attempt_order, never a clock) when a date was loaded again. Each gets its place in
    the sequence and the load it is compared with (the previous one in the sequence). -#}

with

load_runs as (

    select * from {{ ref('stg_mfds__load_runs') }}

),

rejected_loads as (

    select distinct load_id from {{ ref('stg_mfds__rejected_load_signals') }}

),

decisions as (

    select * from {{ ref('int_load_decisions') }}

),

complete_loads as (

    select
        load_runs.*,
        coalesce(decisions.decision = 'accept', false) as accepted_by_person,
        row_number() over (
            partition by load_runs.as_of_date order by load_runs.attempt_order desc
        ) as rank_within_date

    from load_runs
    left join decisions
        on load_runs.load_id = decisions.load_id
    where load_runs.is_usable
        -- a person's decision overrules the gates: accepted comes back, rejected leaves
        and coalesce(decisions.decision, '') <> 'reject'
        and (
            load_runs.load_id not in (select load_id from rejected_loads)
            or decisions.decision = 'accept'
        )

),

sequenced as (

    select
        load_id,
        as_of_date,
        total_count,
        fetched_count,
        distinct_count,
        duplicate_count,
        duration_s,
        retries,
        accepted_by_person,
        row_number() over (order by as_of_date) as load_seq

    from complete_loads
    where rank_within_date = 1

),

with_previous as (

    select
        *,
        lag(load_id) over (order by load_seq) as previous_load_id,
        lag(as_of_date) over (order by load_seq) as previous_as_of_date,
        load_seq = 1 as is_baseline

    from sequenced

)

select * from with_previous
