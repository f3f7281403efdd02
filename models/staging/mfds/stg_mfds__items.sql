with

source as (

    {#- Deviation from the staging style (README): a semi-join filter, so that no row of a
        failed, incomplete or half-written load (colliding positions, missing rows) ever
        reaches a model or a test; such loads stay in raw (the view mfds_raw.dmf_items) for
        inspection. base_mfds__items rebuilds each load from row versions + membership. -#}
    select * from {{ ref('base_mfds__items') }}
    where load_id in (select load_id from {{ ref('stg_mfds__load_runs') }} where is_usable)

),

renamed as (

    select
        {{ record_id('load_id', 'item_position') }} as record_id,
        load_id,
        as_of_date,
        item_position,
        page_no,
        repeat_count,

        {{ display_text('dmf_permit_no') }} as permit_no,
        {{ display_text('ingr_kor_name') }} as ingredient_name,
        {{ display_text('entp_name') }} as applicant,
        {{ display_text('bizrno') }} as applicant_bizrno,
        {{ display_text('mnfctr_name') }} as manufacturer,
        {{ display_text('mnfctr_place') }} as manufacture_place,
        {{ country_list('manuf_country_code_nm') }} as countries,
        {{ display_text('dmf_permit_date') }} as permit_date,
        {{ display_text('notice_code') }} as notice_code,

        {{ normalized_permit_no('dmf_permit_no') }} as permit_no_key,
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
        notice_code as notice_code_raw

    from source

),

parsed as (

    select
        *,
        {{ parse_permit_no('permit_no_key') }},
        {{ fallback_key('ingredient_name_key', 'applicant_bizrno_key', 'manufacturer_key', 'permit_date_key') }}
            as fallback_key

    from renamed

)

select * from parsed
