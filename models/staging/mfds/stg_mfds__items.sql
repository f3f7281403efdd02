{#- One row per raw record per usable load (stg_mfds__load_runs.is_usable): each load's
    membership (stg_mfds__load_items) with the fields of the row version it names, normalized
    once per version (stg_mfds__item_versions). -#}

with

load_items as (

    select * from {{ ref('stg_mfds__load_items') }}

),

versions as (

    select * from {{ ref('stg_mfds__item_versions') }}

),

items as (

    select
        load_items.record_id,
        load_items.load_id,
        load_items.as_of_date,
        load_items.item_position,
        load_items.page_no,
        load_items.repeat_count,

        versions.permit_no,
        versions.ingredient_name,
        versions.applicant,
        versions.applicant_bizrno,
        versions.manufacturer,
        versions.manufacture_place,
        versions.countries,
        versions.permit_date,
        versions.notice_code,

        versions.permit_no_key,
        versions.ingredient_name_key,
        versions.applicant_key,
        versions.applicant_bizrno_key,
        versions.manufacturer_key,
        versions.manufacture_place_key,
        versions.countries_key,
        versions.permit_date_key,
        versions.notice_code_key,

        versions.permit_date_parsed,

        versions.permit_no_raw,
        versions.ingredient_name_raw,
        versions.applicant_raw,
        versions.applicant_bizrno_raw,
        versions.manufacturer_raw,
        versions.manufacture_place_raw,
        versions.countries_raw,
        versions.permit_date_raw,
        versions.notice_code_raw,

        versions.permit_parse_status,
        versions.permit_date_prefix,
        versions.permit_group,
        versions.permit_class,
        versions.permit_sequence,
        versions.permit_subsequence,
        versions.permit_derivation,

        versions.fallback_key

    from load_items
    inner join versions
        on load_items.row_hash = versions.row_hash

)

select * from items
