{%- set latest_load = "select load_id from " ~ ref('int_loads_accepted') ~ " order by load_seq desc limit 1" %}

with

latest as (

    select load_id, as_of_date
    from {{ ref('int_loads_accepted') }}
    order by load_seq desc
    limit 1

),

keyed as (

    -- the latest accepted load's records, named by a literal load id so that DuckDB reads
    -- only that load of int_registration_records, which holds every load
    select * from {{ ref('int_registration_records') }}
    where {{ load_id_in_query(latest_load) }}

),

first_seen as (

    -- the first accepted load of each registration: where its first version starts
    select dmf_key, min(valid_from) as first_seen_as_of
    from {{ ref('int_registration_versions') }}
    group by dmf_key

),

last_changed as (

    select dmf_key, max(as_of_date) as last_event_as_of
    from {{ ref('dmf_events') }}
    group by dmf_key

),

watched as (

    select * from {{ ref('int_registrations_watched') }}

),

registry as (

    select
        keyed.dmf_key,
        keyed.permit_no,
        keyed.ingredient_name,
        keyed.ingredient_name_key,
        keyed.applicant,
        keyed.applicant_bizrno,
        keyed.manufacturer,
        keyed.manufacture_place,
        keyed.countries,
        keyed.permit_date_parsed as permit_date,
        keyed.notice_code,
        keyed.permit_parse_status,
        keyed.permit_date_prefix,
        keyed.permit_group,
        keyed.permit_class,
        keyed.permit_sequence,
        keyed.permit_subsequence,
        keyed.permit_derivation,
        watched.on_watchlist,
        watched.watch_terms,
        watched.watch_matches,
        watched.watch_owners,
        first_seen.first_seen_as_of,
        last_changed.last_event_as_of,
        latest.as_of_date,
        keyed.load_id

    from keyed
    inner join latest
        on keyed.load_id = latest.load_id
    inner join first_seen
        on keyed.dmf_key = first_seen.dmf_key
    left join last_changed
        on keyed.dmf_key = last_changed.dmf_key
    left join watched
        on keyed.record_id = watched.record_id

)

select * from registry
