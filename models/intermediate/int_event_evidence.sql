{#- The lineage of every event of int_registration_events to the raw records behind it, per load
    of the sequence: its record after the event (NEW, CHANGED, REINSTATED) and its record before
    it (CHANGED, WITHDRAWN: the record of the same registration in the load before the event's),
    each with the row version it is stored under, the load it came from and its page and place in
    that load's listing. dmf_event_evidence publishes the rows of the published events.

    Incremental (macros/incremental_loads.sql): a record an event names is of the event's load or
    of the load before it, so a run reads the records of only the new loads and the one before
    them. A mart rebuilt from every event each morning joined them with every record of history
    instead: 1.9 s of a day-365 morning on PostgreSQL, the third-slowest node
    (benchmarks/bench_history.py, issue 40). A load leaving or moving in the sequence changes
    which records are quarantined and what replaces them, so the pre-hook forgets it and every
    later load, as in the other per-load tables. -#}

{{ config(
    materialized='incremental',
    incremental_strategy='append',
    on_schema_change='fail',
    pre_hook=["{{ forget_loads_out_of_sequence() }}"],
) }}

{%- set watermark = incremental_load_watermark() %}

with

events as (

    select
        event_id,
        as_of_date,
        load_id,
        load_seq,
        dmf_key,
        permit_no,
        event_type,
        record_id,
        previous_record_id

    from {{ ref('int_registration_events') }}
    where load_seq > {{ watermark }}

),

load_items as (

    -- the new loads and the one before them
    select * from {{ ref('stg_mfds__load_items') }}
    where {{ load_id_of_loads_from(watermark) }}

),

load_runs as (

    select * from {{ ref('stg_mfds__load_runs') }}

),

sides as (

    select
        event_id,
        as_of_date,
        load_id,
        load_seq,
        dmf_key,
        permit_no,
        event_type,
        'after' as side,
        record_id

    from events
    where event_type <> 'WITHDRAWN'

    union all

    select
        event_id,
        as_of_date,
        load_id,
        load_seq,
        dmf_key,
        permit_no,
        event_type,
        'before' as side,
        previous_record_id as record_id

    from events
    where event_type in ('CHANGED', 'WITHDRAWN')

),

lineage as (

    select
        sides.event_id,
        sides.as_of_date,
        sides.load_id,
        sides.load_seq,
        sides.dmf_key,
        sides.permit_no,
        sides.event_type,
        sides.side,
        sides.record_id,
        cast(load_items.row_hash as bigint) as row_hash,
        load_items.is_quarantined,
        load_items.load_id as record_load_id,
        load_items.as_of_date as record_as_of_date,
        cast(load_items.page_no as bigint) as page_no,
        cast(load_items.item_position as bigint) as item_position,
        load_runs.source_url,
        load_runs.started_at,
        load_runs.finished_at

    from sides
    inner join load_items
        on sides.record_id = load_items.record_id
    inner join load_runs
        on load_items.load_id = load_runs.load_id

)

select * from lineage
