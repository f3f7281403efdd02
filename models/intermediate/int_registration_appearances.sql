{#- Identity, step zero: the keys each record of each load of the sequence is matched on, kept
    narrow so that the identity models read earlier loads from here instead of rebuilding them
    from raw. Incremental (macros/incremental_loads.sql): a run adds the loads after the newest
    one held, after forgetting the loads that left or moved in the sequence. -#}

{{ config(
    materialized='incremental',
    incremental_strategy='append',
    on_schema_change='fail',
    pre_hook="{{ forget_loads_out_of_sequence() }}",
) }}

{%- set watermark = incremental_load_watermark() %}

with

loads as (

    select load_id, load_seq from {{ ref('int_loads_sequenced') }}
    where load_seq > {{ watermark }}

),

items as (

    select
        items.record_id,
        items.load_id,
        loads.load_seq,
        items.permit_no_key,
        items.fallback_key,
        {#- null unless all three parts are known: an empty part would make the key too loose -#}
        items.ingredient_name_key || '|' || items.applicant_bizrno_key || '|' || items.permit_date_key
            as loose_key

    from {{ ref('stg_mfds__items') }} as items
    inner join loads
        on items.load_id = loads.load_id
    where {{ load_id_of_loads_after(watermark, 'items.load_id') }}

)

select * from items
