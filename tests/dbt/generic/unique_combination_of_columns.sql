{#- The grain of a model: no two rows share the values of these columns (nulls count as equal,
    so two rows with a null key part and the rest equal are duplicates too). Written here because
    dbt packages (dbt_utils) cannot be installed; same name and argument as dbt_utils'. Fails with
    one row per duplicated key and how many rows share it. -#}

{% test unique_combination_of_columns(model, combination_of_columns) %}

with

duplicated_keys as (

    select
        {{ combination_of_columns | join(',\n        ') }},
        count(*) as rows_with_this_key

    from {{ model }}
    group by {{ combination_of_columns | join(', ') }}
    having count(*) > 1

)

select * from duplicated_keys

{% endtest %}
