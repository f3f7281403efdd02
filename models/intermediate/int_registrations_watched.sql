{#- Whether each record that is read (those of the latest load, and those events name) falls
    under the watchlist: its ingredient matched a watched ingredient, its applicant is watched
    by name or BIZRNO, or one of its manufacturers contains a watched manufacturer name. watch_matches says how each term matched (the ingredient
    match stage, or applicant / manufacturer), so a person can judge a transliteration match; watch_owners names who owns those terms. -#}

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

hits as (

    select keyed.record_id, ingredient_matches.watch_term, ingredient_matches.match_stage
    from keyed
    inner join ingredient_matches
        on keyed.ingredient_name_key = ingredient_matches.ingredient_name_key

    union all

    select keyed.record_id, terms.watch_term, 'applicant' as match_stage
    from keyed
    inner join terms
        on terms.term_kind = 'applicant'
        and (keyed.applicant_key = terms.term_key or keyed.applicant_bizrno_key = terms.term_key)

    union all

    select keyed.record_id, terms.watch_term, 'manufacturer' as match_stage
    from keyed
    inner join terms
        on terms.term_kind = 'manufacturer'
        and {{ dbt.position('terms.term_key', 'keyed.manufacturer_key') }} > 0

),

owners as (

    select distinct
        watch_term,
        owner

    from terms
    where owner is not null

),

per_record as (

    select
        hits.record_id,
        string_agg(
            distinct {{ bytewise('hits.watch_term') }}, ', ' order by {{ bytewise('hits.watch_term') }}
        ) as watch_terms,
        string_agg(
            distinct {{ bytewise("hits.watch_term || ' (' || hits.match_stage || ')'") }}, ', '
            order by {{ bytewise("hits.watch_term || ' (' || hits.match_stage || ')'") }}
        ) as watch_matches,
        string_agg(
            distinct {{ bytewise('owners.owner') }}, ', ' order by {{ bytewise('owners.owner') }}
        ) as watch_owners

    from hits
    left join owners
        on hits.watch_term = owners.watch_term
    group by hits.record_id

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
