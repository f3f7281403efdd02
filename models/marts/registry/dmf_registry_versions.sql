{#- Every version of every registration, with the dates it was listed, its fields as displayed
    that day, the parts of its registration number and today's watchlist flags: `dmf registry
    --as-of D` reads the versions listed on the accepted day it shows
    (valid_from <= day < valid_to, valid_to null while current), so the registry of any past
    day is one filter on this mart. The history is dmf_registration_history (accepted loads
    only); the flags are int_registration_versions_watched, the matching the registry and the
    events use, so a registration withdrawn long ago is flagged with its owners on a past date. -#}

with

history as (

    select * from {{ ref('dmf_registration_history') }}

),

watched as (

    select * from {{ ref('int_registration_versions_watched') }}

),

versions as (

    select
        history.*,
        {{ normalized_permit_no('history.permit_no') }} as permit_no_key,
        watched.on_watchlist,
        watched.watch_terms,
        watched.watch_matches,
        watched.watch_owners

    from history
    inner join watched
        on history.dmf_key = watched.dmf_key
        and history.version_no = watched.version_no

),

parsed as (

    select
        *,
        {{ parse_permit_no('permit_no_key') }}

    from versions

)

select
    dmf_key,
    version_no,
    valid_from,
    valid_to,
    is_current,
    permit_no,
    ingredient_name,
    applicant,
    applicant_bizrno,
    manufacturer,
    manufacture_place,
    countries,
    permit_date,
    notice_code,
    permit_parse_status,
    permit_date_prefix,
    permit_group,
    permit_class,
    permit_sequence,
    permit_subsequence,
    permit_derivation,
    on_watchlist,
    watch_terms,
    watch_matches,
    watch_owners

from parsed
