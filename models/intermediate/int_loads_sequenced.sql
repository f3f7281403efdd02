{#- The loads that can take part in the history: complete with every item row stored, not rejected by a gate earlier, and
    the newest complete load of its date when a date was loaded again. Each gets its place in
    the sequence and the load it is compared with (the previous one in the sequence). -#}

with

load_runs as (

    select * from {{ ref('stg_mfds__load_runs') }}

),

rejected_loads as (

    select distinct load_id from {{ ref('stg_mfds__rejected_load_signals') }}

),

complete_loads as (

    select
        load_runs.*,
        row_number() over (
            partition by as_of_date order by finished_at desc, load_id desc
        ) as rank_within_date

    from load_runs
    where is_usable
        and load_id not in (select load_id from rejected_loads)

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
