{#- How many item rows each load really left in the raw layer (its membership rows whose row
    version is stored), counted once per load: raw loads are append-only, so a load whose rows
    are all there keeps its count. A table, because every read of stg_mfds__items asks which
    loads are usable, and counting every membership row of history for it grew with the days
    (1.6 million rows at day 180). Incremental: a run counts the loads it has not counted yet
    and recounts those found short (a package cut short by a crash that a later run completed),
    named in the SQL as a literal list so DuckDB reads only their rows. -#}

{{ config(
    materialized='incremental',
    incremental_strategy='delete+insert',
    unique_key='load_id',
    on_schema_change='fail',
) }}

{%- set uncounted = "select load_id from " ~ source('mfds', 'load_runs')
    ~ (" where load_id not in (select load_id from " ~ this ~ " where stored_item_count = distinct_count)"
        if is_incremental() else "") %}

with

load_runs as (

    select load_id, distinct_count from {{ source('mfds', 'load_runs') }}
    where {{ load_id_in_query(uncounted) }}

),

items as (

    select load_id from {{ ref('base_mfds__items') }}
    where {{ load_id_in_query(uncounted) }}

),

stored_items as (

    select
        load_id,
        count(*) as stored_item_count

    from items
    group by load_id

)

select
    load_runs.load_id,
    load_runs.distinct_count,
    coalesce(stored_items.stored_item_count, 0) as stored_item_count

from load_runs
left join stored_items
    on load_runs.load_id = stored_items.load_id
