{#- Every field of each row version (each distinct record ever received, dmf_item_versions) in
    its three forms: display value, comparison key and raw value, the number parsed, and the
    keys identity matches on. stg_mfds__items joins them to each load's membership, so a record
    that did not change since yesterday is never normalized again: normalizing the text is the
    costliest thing the models do (about 50 µs a record, 0.5 s a load, once per model reading a
    load), while a day brings only the few versions that changed.

    Deviation from the staging style (README): an incremental table, not a view. A version's
    normalization depends only on its text and on this model's SQL, so a run normalizes only
    the versions it has not normalized with the SQL it now has: normalized_by is the hash of
    that SQL as rendered, macros expanded, and a version normalized by other SQL (a macro was
    edited) is normalized again and replaced. No full refresh to remember.

    Without JIT on PostgreSQL: the planner costs the new load's raw rows high enough to compile
    the plan to machine code, 0.52 s of the 0.53 s a day-365 morning spent here, for the few
    versions (often none) a day brings; the first build of 9,200 versions took 6.5 s without
    against 7.4 s with (benchmarks/explain_models.py, issue 40). -#}

{{ config(
    materialized='incremental',
    incremental_strategy='delete+insert',
    unique_key='row_hash',
    on_schema_change='sync_all_columns',
    pre_hook="{{ without_jit() }}",
) }}

-- The loop of is_empty_record below: sqlfluff asks for no indent of its lines in the loop's
-- parentheses. LT02 is off over the normalization, whose rendered text is hashed
-- (normalized_by), so a comment inside it would normalize every version again.
-- noqa: disable=LT02
{%- set normalization %}

renamed as (

    select
        row_hash,

        -- a placeholder ("-", "N/A", "없음") is no number: the record is one without a number yet
        case
            when not {{ permit_no_placeholder('dmf_permit_no') }} then {{ display_text('dmf_permit_no') }}
        end as permit_no,
        {{ display_text('ingr_kor_name') }} as ingredient_name,
        {{ display_text('entp_name') }} as applicant,
        {{ display_text('bizrno') }} as applicant_bizrno,
        {{ display_text('mnfctr_name') }} as manufacturer,
        {{ display_text('mnfctr_place') }} as manufacture_place,
        {{ country_list('manuf_country_code_nm') }} as countries,
        {{ display_text('dmf_permit_date') }} as permit_date,
        {{ display_text('notice_code') }} as notice_code,

        case
            when not {{ permit_no_placeholder('dmf_permit_no') }} then {{ normalized_permit_no('dmf_permit_no') }}
        end as permit_no_key,
        {{ comparison_key('ingr_kor_name') }} as ingredient_name_key,
        {{ comparison_key('entp_name') }} as applicant_key,
        {{ comparison_key('bizrno') }} as applicant_bizrno_key,
        {{ comparison_key('mnfctr_name') }} as manufacturer_key,
        {{ comparison_key('mnfctr_place') }} as manufacture_place_key,
        {{ comparison_key(country_list('manuf_country_code_nm')) }} as countries_key,
        {{ comparison_key('dmf_permit_date') }} as permit_date_key,
        {{ comparison_key('notice_code') }} as notice_code_key,

        {{ safe_iso_date(display_text('dmf_permit_date')) }} as permit_date_parsed,

        dmf_permit_no as permit_no_raw,
        ingr_kor_name as ingredient_name_raw,
        entp_name as applicant_raw,
        bizrno as applicant_bizrno_raw,
        mnfctr_name as manufacturer_raw,
        mnfctr_place as manufacture_place_raw,
        manuf_country_code_nm as countries_raw,
        dmf_permit_date as permit_date_raw,
        notice_code as notice_code_raw,

        {{ undecodable_fields({
            'dmf_permit_no': 'permit_no', 'ingr_kor_name': 'ingredient_name', 'entp_name': 'applicant',
            'bizrno': 'applicant_bizrno', 'mnfctr_name': 'manufacturer', 'mnfctr_place': 'manufacture_place',
            'manuf_country_code_nm': 'countries', 'dmf_permit_date': 'permit_date', 'notice_code': 'notice_code',
        }) }} as undecodable_fields,

        {{ unreadable_text({
            'dmf_permit_no': 'permit_no', 'ingr_kor_name': 'ingredient_name', 'entp_name': 'applicant',
            'bizrno': 'applicant_bizrno', 'mnfctr_name': 'manufacturer', 'mnfctr_place': 'manufacture_place',
            'manuf_country_code_nm': 'countries', 'dmf_permit_date': 'permit_date', 'notice_code': 'notice_code',
        }) }} as unreadable_text,

        (
            {%- for column in ['dmf_permit_no', 'ingr_kor_name', 'entp_name', 'bizrno', 'mnfctr_name',
                'mnfctr_place', 'manuf_country_code_nm', 'dmf_permit_date', 'notice_code'] %}
            {{ display_text(column) }} is null{{ ' and' if not loop.last }}
            {%- endfor %}
        ) as is_empty_record

    from source

),

parsed as (

    select
        *,
        {{ parse_permit_no('permit_no_key') }},
        {{ fallback_key('ingredient_name_key', 'applicant_bizrno_key', 'manufacturer_key', 'permit_date_key') }}
            as fallback_key,
        {{ loose_key('ingredient_name_key', 'applicant_bizrno_key', 'permit_date_key') }} as loose_key

    from renamed

)

{%- endset %}
-- noqa: enable=LT02

{%- set normalized_by = local_md5(normalization) %}

with

source as (

    select * from {{ source('mfds', 'dmf_item_versions') }}
    {%- if is_incremental() %}
    where row_hash not in (
        select row_hash from {{ this }}
        where normalized_by = '{{ normalized_by }}'
    )
    {%- endif %}

),

{{ normalization }}

select
    *,
    '{{ normalized_by }}' as normalized_by

from parsed
