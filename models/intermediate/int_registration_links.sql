{#- Identity, step one: link each record to the record it continues in the previous load.
    Stage 1: the same normalized registration number, unique on both sides.
    Stage 2: among records still unlinked on both sides, the same fallback key (ingredient,
      applicant BIZRNO, manufacturer, permit date) when it is unique on both sides. This follows
      a record that receives its number or is renumbered.
    Stage 3: among records still unlinked on both sides (and not ambiguous), the loose key
      (ingredient, applicant BIZRNO, permit date: the fallback key without the manufacturer) when
      it is unique on both sides. This follows a record renumbered on the same day its
      manufacturer text changed (counted by the identity_loose_key signal).
    A fallback key shared by several unlinked records on either side is not guessed: those
    records are listed with match_stage = 'ambiguous' (counted by the identity_ambiguous signal)
    and start a new identity. -#}

{#- Without nested loops on PostgreSQL: the planner takes `records_with_number = 1` (a filter on a
    window's result, true of nearly every record) for 0.5 % of the rows and joined the two loads
    by rescanning one per record of the other: 26.5 s for a day of 9,200 records at day 5, 0.18 s
    with hash joins (EXPLAIN ANALYZE, issue 40). -#}
{#- The index (load_seq, load_id) on PostgreSQL: the watermark and the pre-hook find the loads
    the table holds by walking it, not by reading 3.5 million rows twice a morning at day 365
    (macros/incremental_loads.sql: held_loads). -#}
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    on_schema_change='fail',
    pre_hook=["{{ forget_loads_out_of_sequence() }}", "{{ without_nested_loops() }}"],
    meta={'postgres_indexes': [['load_seq', 'load_id']]},
) }}

{%- set watermark = incremental_load_watermark() %}

with

loads as (

    {#- incremental (macros/incremental_loads.sql): the loads after the newest one held, and
        the load before the first of them, which they are linked to -#}
    select load_id, load_seq from {{ ref('int_loads_sequenced') }}
    where load_seq > {{ watermark }}

),

items as (

    select
        record_id,
        load_id,
        permit_no_key,
        fallback_key,
        loose_key,
        load_seq

    from {{ ref('int_registration_appearances') }}
    where load_seq >= {{ watermark }}
        and load_seq >= (select min(load_seq) - 1 from loads)
        and {{ load_id_of_loads_from(watermark) }}

),

numbered as (

    select
        *,
        count(*) over (partition by load_seq, permit_no_key) as records_with_number,
        count(*) over (partition by load_seq, fallback_key) as records_with_fallback_key

    from items

),

linked_by_number as (

    select
        current_record.record_id,
        previous_record.record_id as previous_record_id,
        current_record.load_seq,
        'permit_no' as match_stage

    from numbered as current_record
    inner join numbered as previous_record
        on previous_record.load_seq = current_record.load_seq - 1
        and current_record.permit_no_key = previous_record.permit_no_key
    where current_record.load_seq in (select load_seq from loads)
        and current_record.permit_no_key is not null
        and current_record.records_with_number = 1
        and previous_record.records_with_number = 1

),

unlinked_current as (

    -- anti joins as not exists throughout (int_registrations_keyed says why)
    select * from numbered
    where not exists (
            select 1 from linked_by_number as linked
            where linked.record_id = numbered.record_id
        )
        and load_seq > 1
        and load_seq in (select load_seq from loads)

),

unlinked_previous as (

    select * from numbered
    where not exists (
            select 1 from linked_by_number as linked
            where linked.previous_record_id = numbered.record_id
        )

),

fallback_candidates as (

    select
        current_record.record_id,
        previous_record.record_id as previous_record_id,
        current_record.load_seq,
        count(*) over (partition by current_record.record_id) as previous_matches,
        count(*) over (partition by previous_record.record_id) as current_matches

    from unlinked_current as current_record
    inner join unlinked_previous as previous_record
        on previous_record.load_seq = current_record.load_seq - 1
        and current_record.fallback_key = previous_record.fallback_key

),

linked_by_fallback as (

    select
        record_id,
        previous_record_id,
        load_seq,
        'fallback_key' as match_stage

    from fallback_candidates
    where previous_matches = 1 and current_matches = 1

),

ambiguous as (

    select distinct
        record_id,
        cast(null as varchar) as previous_record_id,
        load_seq,
        'ambiguous' as match_stage

    from fallback_candidates
    where previous_matches > 1 or current_matches > 1

),

still_unlinked_current as (

    select * from unlinked_current
    where not exists (
            select 1 from linked_by_fallback as linked
            where linked.record_id = unlinked_current.record_id
        )
        and not exists (
            select 1 from ambiguous
            where ambiguous.record_id = unlinked_current.record_id
        )

),

still_unlinked_previous as (

    select * from unlinked_previous
    where not exists (
            select 1 from linked_by_fallback as linked
            where linked.previous_record_id = unlinked_previous.record_id
        )

),

loose_candidates as (

    select
        current_record.record_id,
        previous_record.record_id as previous_record_id,
        current_record.load_seq,
        count(*) over (partition by current_record.record_id) as previous_matches,
        count(*) over (partition by previous_record.record_id) as current_matches

    from still_unlinked_current as current_record
    inner join still_unlinked_previous as previous_record
        on previous_record.load_seq = current_record.load_seq - 1
        and current_record.loose_key = previous_record.loose_key

),

linked_by_loose_key as (

    select
        record_id,
        previous_record_id,
        load_seq,
        'loose_key' as match_stage

    from loose_candidates
    where previous_matches = 1 and current_matches = 1

),

links as (

    select * from linked_by_number
    union all
    select * from linked_by_fallback
    union all
    select * from linked_by_loose_key
    union all
    select * from ambiguous

)

select
    links.*,
    loads.load_id

from links
inner join loads
    on links.load_seq = loads.load_seq
