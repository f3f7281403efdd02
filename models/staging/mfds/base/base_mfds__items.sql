{#- Every record of every load as it was received, rebuilt from the content-addressed raw
    layer: each load's membership (position, page, repeats, row hash) joined to the row version
    its hash names (the 9 fields exactly as received). A base model, so the join lives in one
    place: staging reads usable loads from it, and the load-run check counts what each load
    really left. A membership row whose version is missing (a package cut short) is dropped by
    the inner join, so that load counts fewer stored rows and is not usable. -#}

with

memberships as (

    select * from {{ source('mfds', 'dmf_load_items') }}

),

versions as (

    select * from {{ source('mfds', 'dmf_item_versions') }}

),

items as (

    select
        memberships.load_id,
        memberships.as_of_date,
        memberships.item_position,
        memberships.page_no,
        memberships.repeat_count,
        memberships.row_hash,
        versions.dmf_permit_no,
        versions.ingr_kor_name,
        versions.entp_name,
        versions.mnfctr_name,
        versions.mnfctr_place,
        versions.manuf_country_code_nm,
        versions.dmf_permit_date,
        versions.bizrno,
        versions.notice_code

    from memberships
    inner join versions
        on memberships.row_hash = versions.row_hash

)

select * from items
