{#- Whether each record that is read (those of the latest load, and those events name) falls
    under the watchlist: its ingredient matched a watched ingredient, its applicant is watched
    by name or BIZRNO, or one of its manufacturers contains a watched manufacturer name
    (macro watch_flags, shared with int_registration_versions_watched). watch_matches says how
    each term matched (the ingredient match stage, or applicant / manufacturer), so a person can
    judge a transliteration match; watch_owners names who owns those terms. -#}

{%- set latest_load = "select load_id from " ~ ref('int_loads_sequenced') ~ " order by load_seq desc limit 1" %}

with

event_records as (

    select record_id from {{ ref('int_registration_events') }}
    union
    select previous_record_id from {{ ref('int_registration_events') }}

),

keyed as (

    -- the records something reads the flag of: those of the latest load of the sequence (the
    -- registry now) and those events name; not every record of every load, so the flags follow
    -- a watchlist edit at once without re-matching all of history each day
    select * from {{ ref('int_registrations_keyed') }}
    where {{ load_id_in_query(latest_load) }}

    union all

    select * from {{ ref('int_registrations_keyed') }}
    where record_id in (select event_records.record_id from event_records)
        and not {{ load_id_in_query(latest_load) }}

),

terms as (

    select * from {{ ref('int_watchlist_terms') }}

),

ingredient_matches as (

    select * from {{ ref('int_ingredient_watch_matches') }}

),

per_record as (

    {{ watch_flags('keyed', 'terms', 'ingredient_matches') }}

)

select
    keyed.record_id,
    per_record.record_id is not null as on_watchlist,
    per_record.watch_terms,
    per_record.watch_matches,
    per_record.watch_owners

from keyed
left join per_record
    on keyed.record_id = per_record.record_id
