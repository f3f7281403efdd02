{#- Whether each version of every registration (int_registration_versions, the history
    dmf_registration_history publishes) falls under today's watchlist, by the same rule as the
    registry now and the events (macro watch_flags): so a registration withdrawn long ago, or a
    version that has since changed, is flagged with its terms and owners on any past date.

    A version's fields are the same on every load it spans, so its flags are those of its first
    record (the load it starts on): one record per version is matched, not every record of every
    load. A table rebuilt each build, like int_registrations_watched, so a watchlist edit flags
    the whole history at once. -#}

with

versions as (

    select dmf_key, version_no, first_load_seq
    from {{ ref('int_registration_versions') }}

),

keyed as (

    -- the record each version starts with, carrying the comparison keys the watchlist matches;
    -- distinct: a row int_registrations_keyed holds twice is its own key test's to report (the
    -- morning tests that table on its new loads only), not a second version here
    select distinct
        versions.dmf_key,
        versions.version_no,
        records.record_id,
        records.ingredient_name_key,
        records.applicant_key,
        records.applicant_bizrno_key,
        records.manufacturer_key

    from versions
    inner join {{ ref('int_registrations_keyed') }} as records
        on versions.dmf_key = records.dmf_key
        and versions.first_load_seq = records.load_seq

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
    keyed.dmf_key,
    keyed.version_no,
    keyed.record_id,
    per_record.record_id is not null as on_watchlist,
    per_record.watch_terms,
    per_record.watch_matches,
    per_record.watch_owners

from keyed
left join per_record
    on keyed.record_id = per_record.record_id
