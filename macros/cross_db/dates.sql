{#- Days as rows (dbt.dateadd covers date arithmetic). -#}

{% macro date_spine_days(start_date, end_date) -%}
    {#- A set-returning expression: every day from start_date to end_date. -#}
    {{ return(adapter.dispatch('date_spine_days', 'dmf_watch')(start_date, end_date)) }}
{%- endmacro %}

{% macro default__date_spine_days(start_date, end_date) -%}
    generate_series(
                {{ start_date }}, {{ end_date }}, interval '1 day'
            )
{%- endmacro %}

{% macro duckdb__date_spine_days(start_date, end_date) -%}
    unnest(generate_series(
                {{ start_date }}, {{ end_date }}, interval 1 day
            ))
{%- endmacro %}
