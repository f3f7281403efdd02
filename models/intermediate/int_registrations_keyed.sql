{#- Identity, step two: every record gets the dmf_key of the chain of links it belongs to.
    A chain starts at a record with no link (the baseline, a new registration, or an ambiguous
    case); its key is a hash of the date it first appeared and what identified it then (its
    number, else its fallback key), so keys are stable across rebuilds and never reused. A
    registration that comes back (int_registration_reinstatements) continues its old chain across
    the loads it was absent from.

    Incremental (macros/incremental_loads.sql): a run keys only the loads after the newest one
    held. Their chains start from the keys the table already holds: the records of the load
    before them, and the records returning registrations were last seen with; nothing walks
    the whole history again. A full refresh walks every load from the baseline.

    A chain is followed by doubling jumps, not one load at a time: each record first reaches the
    record its link continues, then each level jumps twice as far (the record reached, reached
    from the record reached), so ceil(log2(K)) levels of one join each reach the chain's start
    across K loads. A recursive walk took one join of every link per load, K times: minutes on
    PostgreSQL for a 365-load backfill, where each step sorted all 3.4 million links again.

    It keeps, per record, the keys and the comparison keys read across all of history (the
    watchlist flags, the identity-churn signal); the displayed fields stay in the raw layer's
    row versions, stored once however many loads carry them, and int_registration_records
    joins them back for the loads a model reads (at day 365 the wide table was 446 MiB of a
    952 MiB warehouse, every unchanged record stored again each day). -#}

{#- on_schema_change: a warehouse built before the table was narrowed drops its displayed-field
    columns and keeps its keys, rather than failing or walking every load again. -#}
{#- Without JIT on PostgreSQL: the chains' CTEs carry no statistics (a recursive walk then,
    estimated at 2.4 billion rows for the 9,212 of a morning), so PostgreSQL compiled the plan
    with optimization and inlining: 2.85 s of the model's 3.15 s at day 6, growing with the days
    (EXPLAIN ANALYZE, benchmarks/explain_models.py, issue 40). -#}
{#- The index (load_seq, load_id) on PostgreSQL: the watermark and the pre-hook find the loads
    the table holds by walking it, not by reading 3.5 million rows twice a morning at day 365
    (macros/incremental_loads.sql: held_loads). -#}
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    on_schema_change='sync_all_columns',
    pre_hook=["{{ forget_loads_out_of_sequence() }}", "{{ without_jit() }}"],
    meta={'postgres_indexes': [['load_seq', 'load_id']]},
) }}

{%- set watermark = incremental_load_watermark() %}
{%- set jump_levels = chain_jump_levels(watermark) %}

with

new_loads as (

    select load_id, load_seq from {{ ref('int_loads_sequenced') }}
    where load_seq > {{ watermark }}

),

items as (

    select
        items.*,
        new_loads.load_seq

    from {{ ref('stg_mfds__items') }} as items
    inner join new_loads
        on items.load_id = new_loads.load_id
    where {{ load_id_of_loads_after(watermark, 'items.load_id') }}

),

links as (

    select record_id, previous_record_id, match_stage
    from {{ ref('int_registration_links') }}
    where match_stage <> 'ambiguous'
        and load_seq > {{ watermark }}
        and load_seq in (select load_seq from new_loads)

    union all

    select record_id, previous_record_id, match_stage
    from {{ ref('int_registration_reinstatements') }}
    where match_stage <> 'new_identity'
        and load_seq > {{ watermark }}
        and load_seq in (select load_seq from new_loads)

),

chain_identities as (

    select
        record_id,
        item_position,
        cast(as_of_date as varchar) || '|' || coalesce('P:' || permit_no_key, 'F:' || fallback_key) as identity_text,
        load_id

    from items
    -- not exists, not `not in`: PostgreSQL hashes a `not in` list only while it fits in
    -- work_mem, and a catch-up's links (9,200 a load) do not; it then scanned the list once per
    -- record, minutes for a 27-load catch-up (benchmarks/bench_history.py, issue 40)
    where not exists (
            select 1 from links
            where links.record_id = items.record_id
        )

),

chain_starts as (

    -- two chains starting in one load from the same number or fallback key (records the links
    -- could not tell apart) are told apart by their place in the list: a key is never shared
    select
        record_id,
        'dmf_' || left(
            md5(
                identity_text
                || case
                    when count(*) over (partition by load_id, identity_text) > 1
                        then '|#' || cast(item_position as varchar)
                    else ''
                end
            ),
            16
        ) as dmf_key

    from chain_identities

    {%- if is_incremental() %}

    union all

    -- the keys held for the records the new loads continue
    select held.record_id, held.dmf_key
    from {{ this }} as held
    where held.record_id in (select previous_record_id from links)
    {%- endif %}

),

hops_0 as materialized (

    -- the record each record's link continues; a chain's start reaches itself
    select
        items.record_id,
        coalesce(links.previous_record_id, items.record_id) as reaches

    from items
    left join links
        on items.record_id = links.record_id

),
{%- for level in range(1, jump_levels + 1) %}

hops_{{ level }} as materialized (

    -- twice as far: from the record reached, what it reaches; a start (or a record the table
    -- held already) is not in the list and reaches no further
    select
        hops.record_id,
        coalesce(further.reaches, hops.reaches) as reaches

    from hops_{{ level - 1 }} as hops
    left join hops_{{ level - 1 }} as further
        on hops.reaches = further.record_id

),
{%- endfor %}

chains as (

    -- a missing start leaves dmf_key null, which its not_null test stops
    select
        hops.record_id,
        chain_starts.dmf_key

    from hops_{{ jump_levels }} as hops
    left join chain_starts
        on hops.reaches = chain_starts.record_id

),

keyed as (

    select
        chains.dmf_key,
        coalesce(links.match_stage, 'new_identity') as match_stage,
        items.record_id,
        items.load_id,
        items.load_seq,
        items.as_of_date,
        items.ingredient_name_key,
        items.applicant_key,
        items.applicant_bizrno_key,
        items.manufacturer_key

    from items
    inner join chains
        on items.record_id = chains.record_id
    left join links
        on items.record_id = links.record_id

)

select * from keyed
