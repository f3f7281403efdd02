{#- Every event with its watchlist flag: the registration is watched before or after the event
    (a manufacturer we watch that was removed still makes the event ours). -#}

with

events as (

    select * from {{ ref('int_registration_events') }}

),

watched as (

    select * from {{ ref('int_registrations_watched') }}

),

events_watched as (

    select
        events.*,
        (
            coalesce(current_watch.on_watchlist, false)
            or coalesce(previous_watch.on_watchlist, false)
        ) as on_watchlist,
        coalesce(current_watch.watch_terms, previous_watch.watch_terms) as watch_terms,
        coalesce(current_watch.watch_matches, previous_watch.watch_matches) as watch_matches,
        coalesce(current_watch.watch_owners, previous_watch.watch_owners) as watch_owners

    from events
    left join watched as current_watch
        on events.record_id = current_watch.record_id
    left join watched as previous_watch
        on events.previous_record_id = previous_watch.record_id

)

select * from events_watched
