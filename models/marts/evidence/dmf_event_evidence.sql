{#- The lineage from each published event to the raw records behind it: for every event of
    dmf_events, its record after the event (NEW, CHANGED, REINSTATED) and its record before the
    event (CHANGED, WITHDRAWN: the last record listed), each with the row version it was stored
    under (mfds_raw.dmf_item_versions.row_hash), the load it came from and its page and position
    in that load's listing. `dmf evidence` picks one registration's rows and reads each record by
    its row_hash. A record the models could not read (quarantined) stands for its registration's
    last good version, as every model downstream of staging sees it (is_quarantined says so).
    int_event_evidence holds the lineage of every event, load by load; this is its published part. -#}

with

published_events as (

    select event_id from {{ ref('dmf_events') }}

),

lineage as (

    select * from {{ ref('int_event_evidence') }}
    where event_id in (select published_events.event_id from published_events)

),

published as (

    select
        event_id,
        as_of_date,
        load_id as event_load_id,
        dmf_key,
        permit_no,
        event_type,
        side,
        record_id,
        row_hash,
        is_quarantined,
        record_load_id,
        record_as_of_date,
        page_no,
        item_position,
        source_url,
        started_at,
        finished_at

    from lineage

)

select * from published
