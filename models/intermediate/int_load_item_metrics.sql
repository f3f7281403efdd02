{#- One row per usable load with the figures its own records give (counts, parse failures,
    null shares, repeated numbers): they depend on nothing but that load, so each load is
    measured once. Incremental: a run measures the usable loads not measured yet, named in
    the SQL as a literal list so that DuckDB normalizes only their records (a join with the
    list of loads normalized every record of history first: 2.8 s a day at day 30, and
    growing). Raw loads are append-only, so a measured load never changes. -#}

{{ config(
    materialized='incremental',
    incremental_strategy='append',
    on_schema_change='fail',
) }}

{%- set usable_loads = "select load_id from " ~ ref('stg_mfds__load_runs') ~ " where is_usable" %}
{%- set unmeasured = usable_loads
    ~ (" and load_id not in (select load_id from " ~ this ~ ")" if is_incremental() else "") %}

with

items as (

    select * from {{ ref('stg_mfds__items') }}
    where {{ load_id_in_query(unmeasured) }}

),

item_quality as (

    select
        load_id,
        count(*) as record_count,
        {%- for field in registration_fields() %}
        {{ divide('100.0 * count(*) filter (where ' ~ field ~ ' is null)', 'nullif(count(*), 0)') }}
            as {{ field }}_null_pct,
        {%- endfor %}
        count(*) filter (where permit_parse_status = 'unparsed') as permit_parse_failures,
        count(*) filter (where permit_date is not null and permit_date_parsed is null) as permit_date_failures

    from items
    group by load_id

),

duplicate_numbers as (

    select load_id, count(*) as duplicate_number_groups
    from (
        select load_id, permit_no_key
        from items
        where permit_no_key is not null
        group by load_id, permit_no_key
        having count(*) > 1 or max(repeat_count) > 1
    ) as duplicated
    group by load_id

)

select
    item_quality.*,
    coalesce(duplicate_numbers.duplicate_number_groups, 0) as duplicate_number_groups

from item_quality
left join duplicate_numbers
    on item_quality.load_id = duplicate_numbers.load_id
