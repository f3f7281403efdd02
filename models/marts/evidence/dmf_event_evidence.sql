{#- The lineage from each published event to the raw records behind it: for every event of
    dmf_events, its record after the event (NEW, CHANGED, REINSTATED) and its record before the
    event (CHANGED, WITHDRAWN: the last record listed), each with the row version it was stored
    under (mfds_raw.dmf_item_versions.row_hash), the load it came from and its page and position
    in that load's listing. `dmf evidence` picks one registration's rows and reads each record by
    its row_hash. A record the models could not read (quarantined) stands for its registration's
    last good version, as every model downstream of staging sees it (is_quarantined says so). -#}

with

published_events as (

    select event_id from {{ ref('dmf_events') }}

),

events as (

    select * from {{ ref('int_events_scored') }}
    where event_id in (select published_events.event_id from published_events)

),

load_items as (

    select * from {{ ref('stg_mfds__load_items') }}

),

load_runs as (

    select * from {{ ref('stg_mfds__load_runs') }}

),

sides as (

    select
        event_id,
        as_of_date,
        load_id as event_load_id,
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
        load_id as event_load_id,
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
        sides.event_load_id,
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
