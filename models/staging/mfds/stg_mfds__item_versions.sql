{#- The keys identity matches on, computed once per row version (each distinct record ever
    received) rather than once per record of every load: joined to a load's membership
    (stg_mfds__load_items) they give every record's keys without normalizing its text again,
    which is what lets the identity models read all of history (int_registration_appearances).
    The same macros as stg_mfds__items, so a record and its row version carry the same keys. -#}

with

source as (

    select * from {{ source('mfds', 'dmf_item_versions') }}

),

compared as (

    select
        row_hash,
        {{ normalized_permit_no('dmf_permit_no') }} as permit_no_key,
        {{ comparison_key('ingr_kor_name') }} as ingredient_name_key,
        {{ comparison_key('bizrno') }} as applicant_bizrno_key,
        {{ comparison_key('mnfctr_name') }} as manufacturer_key,
        {{ comparison_key('dmf_permit_date') }} as permit_date_key

    from source

),

keyed as (

    select
        row_hash,
        permit_no_key,
        {{ fallback_key('ingredient_name_key', 'applicant_bizrno_key', 'manufacturer_key', 'permit_date_key') }}
            as fallback_key,
        {{ loose_key('ingredient_name_key', 'applicant_bizrno_key', 'permit_date_key') }} as loose_key

    from compared

)

select * from keyed
