{#- Identity, step one and a half: a registration that comes back after being absent.
    A record that starts a new chain (no link to the previous load) is matched to the record a
    registration was last seen with, when that registration was withdrawn earlier:
    Stage 1: the same normalized registration number, absent from every load in between, held by
      one record on each side.
    Stage 2: among records still unmatched, the same fallback key on the same terms.
    The last record seen must end its chain (nothing continued it in the next load), and the
    absence (from the as-of date of the load that published the WITHDRAWN event to today's)
    must not exceed var('reinstatement_window_days'); a registration gone longer starts a new
    identity. Only the link is added: the WITHDRAWN event stays published.

    Every chain start searched is listed, as new_identity when no withdrawn registration comes
    back with it: the table then holds each load it has searched, and its incremental watermark
    (macros/incremental_loads.sql) is the newest of them. Holding only the reinstatements, it
    searched every load again after the last one (reinstatements are rare: at day 365 of the
    simulated registry, all 365 loads every morning).

    Incremental: a run looks at the chain starts of the loads after the newest one held, and
    reads the earlier appearances of only their numbers and fallback keys, found through the row
    versions that carry them (int_registration_appearances by row_hash), and the links of only
    the records those appearances name (each read of int_registration_links filters it, rather
    than one CTE of every link of history): the same last appearance, and the same verdict on
    it, as a scan of the whole history.

    On PostgreSQL the appearances are looked up version by version through the raw table's index
    on row_hash (planned_apart, macros/planner.sql): at day 365 the node took 3.4 s a morning
    for two scans of every record of every load, and the lookups take 0.07 s (EXPLAIN ANALYZE,
    issue 40). Without JIT: the planner, which cannot see how few keys a morning looks up, costs
    the lookups high enough to compile the plan to machine code, 2.4 s for a query of 0.07 s. -#}

{{ config(
    materialized='incremental',
    incremental_strategy='append',
    on_schema_change='fail',
    pre_hook=["{{ forget_loads_out_of_sequence() }}", "{{ without_jit() }}"],
) }}

{%- set watermark = incremental_load_watermark() %}

with

loads as (

    select load_id, load_seq, as_of_date from {{ ref('int_loads_sequenced') }}

),

chain_starts as (

    select record_id, load_id, permit_no_key, fallback_key, load_seq
    from {{ ref('int_registration_appearances') }} as appearances
    where load_seq > 1
        and load_seq > {{ watermark }}
        and {{ load_id_of_loads_after(watermark) }}
        -- not exists, not `not in`: a catch-up's links outgrow what PostgreSQL hashes for a
        -- `not in` (int_registrations_keyed says more). One literal bound on load_seq and no
        -- semi-join with the new loads' list: the appearances and links are of sequenced loads
        -- only, and PostgreSQL estimated the semi-join at one row, then rescanned the links
        -- once per record (8.4 s on day 2).
        and not exists (
            select 1 from {{ ref('int_registration_links') }} as links
            where links.record_id = appearances.record_id
                and links.match_stage <> 'ambiguous'
                and links.load_seq > {{ watermark }}
        )

),

versions as (

    select row_hash, permit_no_key, fallback_key from {{ ref('stg_mfds__item_versions') }}

),

fallback_versions as (

    select row_hash from versions
    where fallback_key in (select fallback_key from chain_starts)
    {{ planned_apart() }}

),

fallback_records as (

    -- every appearance of the row versions that carry a chain start's fallback key, looked up
    -- version by version (on PostgreSQL by the raw table's index on row_hash: planned_apart)
    select appearances.*
    from fallback_versions
    cross join lateral (
        select
            appearances.record_id,
            appearances.load_id,
            appearances.permit_no_key,
            appearances.fallback_key,
            appearances.load_seq
        from {{ ref('int_registration_appearances') }} as appearances
        where appearances.row_hash = fallback_versions.row_hash
        {{ planned_apart() }}
    ) as appearances

),

number_keys as (

    -- the numbers of the chain starts, and those of the records their fallback keys meet (a
    -- record matched by number is not matched again by fallback key, below)
    select permit_no_key from chain_starts
    where permit_no_key is not null
    union
    select permit_no_key from fallback_records
    where permit_no_key is not null

),

number_versions as (

    select row_hash from versions
    where permit_no_key in (select permit_no_key from number_keys)
    {{ planned_apart() }}

),

number_records as (

    select appearances.*
    from number_versions
    cross join lateral (
        select
            appearances.record_id,
            appearances.permit_no_key,
            appearances.load_seq
        from {{ ref('int_registration_appearances') }} as appearances
        where appearances.row_hash = number_versions.row_hash
        {{ planned_apart() }}
    ) as appearances

),

number_appearances as (

    select
        permit_no_key as match_key,
        load_seq,
        count(*) as records,
        min({{ bytewise('record_id') }}) as record_id

    from number_records
    group by permit_no_key, load_seq

),

number_returns as (

    select
        *,
        lag(load_seq) over (partition by match_key order by load_seq) as last_seen_seq,
        lag(records) over (partition by match_key order by load_seq) as last_seen_records,
        lag(record_id) over (partition by match_key order by load_seq) as last_seen_record_id

    from number_appearances

),

number_gaps as (

    -- every return of these numbers after an absence, inside the window or not, held by one
    -- record on each side
    select * from number_returns
    where load_seq >= last_seen_seq + 2
        and records = 1
        and last_seen_records = 1

),

returned_by_number as (

    select
        record_id,
        last_seen_record_id as previous_record_id,
        load_seq,
        last_seen_seq,
        'reinstated_permit_no' as match_stage

    from number_gaps
    -- it starts a chain: it links to no record of the load before
    where record_id not in (
            select record_id from {{ ref('int_registration_links') }}
            where match_stage <> 'ambiguous'
                and record_id in (select record_id from number_gaps)
        )
        -- the last record seen ends its chain: no record of a later load links to it
        and last_seen_record_id not in (
            select previous_record_id from {{ ref('int_registration_links') }}
            where match_stage <> 'ambiguous'
                and previous_record_id in (select last_seen_record_id from number_gaps)
        )

),

reinstated_by_number as (

    select * from returned_by_number
    where record_id in (select record_id from chain_starts)

),

fallback_appearances as (

    select
        fallback_key as match_key,
        load_seq,
        count(*) as records,
        min({{ bytewise('record_id') }}) as record_id

    from fallback_records
    where record_id not in (select record_id from returned_by_number)
        and record_id not in (select previous_record_id from returned_by_number)
    group by fallback_key, load_seq

),

fallback_returns as (

    select
        *,
        lag(load_seq) over (partition by match_key order by load_seq) as last_seen_seq,
        lag(records) over (partition by match_key order by load_seq) as last_seen_records,
        lag(record_id) over (partition by match_key order by load_seq) as last_seen_record_id

    from fallback_appearances

),

fallback_gaps as (

    select * from fallback_returns
    where load_seq >= last_seen_seq + 2
        and records = 1
        and last_seen_records = 1
        and record_id in (select record_id from chain_starts)

),

reinstated_by_fallback as (

    select
        record_id,
        last_seen_record_id as previous_record_id,
        load_seq,
        last_seen_seq,
        'reinstated_fallback_key' as match_stage

    from fallback_gaps
    where last_seen_record_id not in (
            select previous_record_id from {{ ref('int_registration_links') }}
            where match_stage <> 'ambiguous'
                and previous_record_id in (select last_seen_record_id from fallback_gaps)
        )

),

returns as (

    select * from reinstated_by_number
    union all
    select * from reinstated_by_fallback

),

measured as (

    select
        returns.record_id,
        returns.previous_record_id,
        returns.match_stage,
        withdrawal_load.as_of_date as withdrawn_as_of,
        cast(return_load.as_of_date - withdrawal_load.as_of_date as integer) as absent_days

    from returns
    inner join loads as withdrawal_load
        on withdrawal_load.load_seq = returns.last_seen_seq + 1
    inner join loads as return_load
        on returns.load_seq = return_load.load_seq

),

reinstated as (

    select * from measured
    where absent_days <= {{ var('reinstatement_window_days') }}

),

searched as (

    select
        chain_starts.record_id,
        reinstated.previous_record_id,
        chain_starts.load_seq,
        coalesce(reinstated.match_stage, 'new_identity') as match_stage,
        reinstated.withdrawn_as_of,
        reinstated.absent_days,
        chain_starts.load_id

    from chain_starts
    left join reinstated
        on chain_starts.record_id = reinstated.record_id

)

select * from searched
