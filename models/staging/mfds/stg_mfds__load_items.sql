with

usable_loads as (

    select load_id from {{ ref('stg_mfds__load_runs') }}
    where is_usable

),

source as (

    {#- The same semi-join as stg_mfds__items: no membership row of a failed, incomplete or
        half-written load reaches a model. -#}
    select * from {{ source('mfds', 'dmf_load_items') }}
    where load_id in (select load_id from usable_loads)

),

renamed as (

    select
        {{ record_id('load_id', 'item_position') }} as record_id,
        load_id,
        item_position,
        row_hash

    from source

)

select * from renamed
