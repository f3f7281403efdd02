{#- Every version of every registration, with the dates it was listed, its fields as displayed
    that day, the parts of its registration number and today's watchlist flags: `dmf registry
    --as-of D` reads the versions listed on the accepted day it shows
    (valid_from <= day < valid_to, valid_to null while current), so the registry of any past
    day is one filter on this mart. The history is dmf_registration_history (accepted loads
    only); the flags are int_registration_versions_watched, the matching the registry and the
    events use, so a registration withdrawn long ago is flagged with its owners on a past date.

    The parts of a number are those of the displayed number, normalized (normalized_permit_no)
    and parsed (parse_permit_no). Staging parsed every row version once already, from the
    number as received: where that number normalized to printable ASCII and 수 alone, it differs
    from the displayed one only by white space, which normalizing removes from both, so its
    parts are read there; only the others (no number, a stray Unicode space or mark) are parsed
    here. Parsing every version each build cost 5 to 8 s a morning on PostgreSQL (issue 40). -#}

{%- set part_columns = [
    'permit_parse_status', 'permit_date_prefix', 'permit_group', 'permit_class', 'permit_sequence',
    'permit_subsequence', 'permit_derivation',
] %}

with

history as (

    select * from {{ ref('dmf_registration_history') }}

),

watched as (

    select * from {{ ref('int_registration_versions_watched') }}

),

numbers_parsed_in_staging as (

    -- one row per displayed number: every row version of it with such a key has the same key
    select distinct
        permit_no,
        {{ part_columns | join(',\n        ') }}

    from {{ ref('stg_mfds__item_versions') }}
    where {{ regex_matches('permit_no_key', '^[!-~수]+$') }}

),

versions as (

    select
        history.*,
        watched.on_watchlist,
        watched.watch_terms,
        watched.watch_matches,
        watched.watch_owners

    from history
    inner join watched
        on history.dmf_key = watched.dmf_key
        and history.version_no = watched.version_no

),

read_from_staging as (

    select
        versions.*,
        numbers.{{ part_columns | join(',\n        numbers.') }}

    from versions
    inner join numbers_parsed_in_staging as numbers
        on versions.permit_no = numbers.permit_no

),

left_to_parse as (

    select
        versions.*,
        {{ normalized_permit_no('versions.permit_no') }} as permit_no_key

    from versions
    left join numbers_parsed_in_staging as numbers
        on versions.permit_no = numbers.permit_no
    where numbers.permit_no is null

),

parsed_here as (

    select
        *,
        {{ parse_permit_no('permit_no_key') }}

    from left_to_parse

),

parsed as (

    {%- for side in ['read_from_staging', 'parsed_here'] %}
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
        {{ part_columns | join(',\n        ') }},
        on_watchlist,
        watch_terms,
        watch_matches,
        watch_owners

    from {{ side }}
    {{ "union all" if not loop.last }}
    {%- endfor %}

)

select * from parsed
