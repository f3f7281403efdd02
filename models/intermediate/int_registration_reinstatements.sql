{#- Identity, step one and a half: a registration that comes back after being absent.
    A record that starts a new chain (no link to the previous load) is matched to the record a
    registration was last seen with, when that registration was withdrawn earlier:
    Stage 1: the same normalized registration number, absent from every load in between, held by
      one record on each side.
    Stage 2: among records still unmatched, the same fallback key on the same terms.
    The last record seen must end its chain (nothing continued it in the next load), and the
    absence (from the as-of date of the load that published the WITHDRAWN event to today's)
    must not exceed var('reinstatement_window_days'); a registration gone longer starts a new
    identity. Only the link is added: the WITHDRAWN event stays published. -#}

with

loads as (

    select load_seq, as_of_date from {{ ref('int_loads_sequenced') }}

),

items as (

    select
        items.record_id,
        items.permit_no_key,
        items.fallback_key,
        loads.load_seq

    from {{ ref('stg_mfds__items') }} as items
    inner join {{ ref('int_loads_sequenced') }} as loads
        on items.load_id = loads.load_id

),

links as (

    select * from {{ ref('int_registration_links') }}
    where match_stage <> 'ambiguous'

),

chain_starts as (

    select record_id from items
    where load_seq > 1
        and record_id not in (select record_id from links)

),

chain_ends as (

    select record_id from items
    where record_id not in (select previous_record_id from links)

),

number_appearances as (

    select
        permit_no_key as match_key,
        load_seq,
        count(*) as records,
        min(record_id) as record_id

    from items
    where permit_no_key is not null
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

reinstated_by_number as (

    select
        record_id,
        last_seen_record_id as previous_record_id,
        load_seq,
        last_seen_seq,
        'reinstated_permit_no' as match_stage

    from number_returns
    where load_seq >= last_seen_seq + 2
        and records = 1
        and last_seen_records = 1
        and record_id in (select record_id from chain_starts)
        and last_seen_record_id in (select record_id from chain_ends)

),

fallback_appearances as (

    select
        fallback_key as match_key,
        load_seq,
        count(*) as records,
        min(record_id) as record_id

    from items
    where record_id not in (select record_id from reinstated_by_number)
        and record_id not in (select previous_record_id from reinstated_by_number)
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

reinstated_by_fallback as (

    select
        record_id,
        last_seen_record_id as previous_record_id,
        load_seq,
        last_seen_seq,
        'reinstated_fallback_key' as match_stage

    from fallback_returns
    where load_seq >= last_seen_seq + 2
        and records = 1
        and last_seen_records = 1
        and record_id in (select record_id from chain_starts)
        and last_seen_record_id in (select record_id from chain_ends)

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
        returns.load_seq,
        returns.match_stage,
        withdrawal_load.as_of_date as withdrawn_as_of,
        cast(return_load.as_of_date - withdrawal_load.as_of_date as integer) as absent_days

    from returns
    inner join loads as withdrawal_load
        on withdrawal_load.load_seq = returns.last_seen_seq + 1
    inner join loads as return_load
        on return_load.load_seq = returns.load_seq

)

select * from measured
where absent_days <= {{ var('reinstatement_window_days') }}
