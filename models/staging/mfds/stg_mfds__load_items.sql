with

usable_loads as (

    select load_id from {{ ref('stg_mfds__load_runs') }}
    where is_usable

),

source as (

    {#- Deviation from the staging style (README): a semi-join filter, so that no row of a
        failed, incomplete or half-written load (colliding positions, missing rows) ever
        reaches a model or a test (stg_mfds__items is these rows with their fields); such loads
        stay in raw (the view mfds_raw.dmf_items) for inspection. -#}
    select * from {{ source('mfds', 'dmf_load_items') }}
    where load_id in (select load_id from usable_loads)

),

renamed as (

    select
        {{ record_id('load_id', 'item_position') }} as record_id,
        load_id,
        as_of_date,
        item_position,
        page_no,
        repeat_count,
        row_hash

    from source

)

select * from renamed
