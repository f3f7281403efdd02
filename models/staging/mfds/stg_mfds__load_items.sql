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

quarantined as (

    {#- Deviation from the staging style (README): the records a load holds that the models
        cannot read (int_load_items_quarantined) are replaced by their registration's last good
        version, or dropped, here, so that no model downstream reads one as received. -#}
    select record_id, replacement_row_hash from {{ ref('int_load_items_quarantined') }}

),

renamed as (

    select
        {{ record_id('source.load_id', 'source.item_position') }} as record_id,
        source.load_id,
        source.as_of_date,
        source.item_position,
        source.page_no,
        source.repeat_count,
        coalesce(quarantined.replacement_row_hash, source.row_hash) as row_hash,
        quarantined.record_id is not null as is_quarantined

    from source
    left join quarantined
        on {{ record_id('source.load_id', 'source.item_position') }} = quarantined.record_id
    where quarantined.record_id is null
        or quarantined.replacement_row_hash is not null

)

select * from renamed
