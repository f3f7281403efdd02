{#- A key column: never null and never shared by two rows. dbt's unique and not_null in one
    test, so that each key costs the build one node and one scan instead of two (a node is about
    30 ms of dbt's own work, and the morning build has a budget). Fails with one row per
    duplicated value, and one for the nulls, with how many rows hold it. -#}

{% test primary_key(model, column_name) %}

with

broken_keys as (

    select
        {{ column_name }} as key_value,
        count(*) as rows_with_this_key

    from {{ model }}
    group by {{ column_name }}
    having count(*) > 1 or {{ column_name }} is null

)

select * from broken_keys

{% endtest %}
