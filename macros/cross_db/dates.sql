{#- Date arithmetic in days. -#}

{% macro days_before(date_value, days) -%}
    {#- The date `days` days before a date, as a date. -#}
    {{ return(adapter.dispatch('days_before', 'dmf_watch')(date_value, days)) }}
{%- endmacro %}

{% macro default__days_before(date_value, days) -%}
    cast({{ date_value }} - interval {{ days }} day as date)
{%- endmacro %}

{% macro postgres__days_before(date_value, days) -%}
    cast({{ date_value }} - {{ days }} as date)
{%- endmacro %}


{% macro date_spine_days(start_date, end_date) -%}
    {#- A set-returning expression: every day from start_date to end_date. -#}
    {{ return(adapter.dispatch('date_spine_days', 'dmf_watch')(start_date, end_date)) }}
{%- endmacro %}

{% macro default__date_spine_days(start_date, end_date) -%}
    unnest(generate_series(
                {{ start_date }}, {{ end_date }}, interval 1 day
            ))
{%- endmacro %}

{% macro postgres__date_spine_days(start_date, end_date) -%}
    generate_series(
                {{ start_date }}, {{ end_date }}, interval '1 day'
            )
{%- endmacro %}


{% macro interval_days(days) -%}
    {#- An interval of `days` days, e.g. in a window's range frame. -#}
    {{ return(adapter.dispatch('interval_days', 'dmf_watch')(days)) }}
{%- endmacro %}

{% macro default__interval_days(days) -%}
    interval {{ days }} days
{%- endmacro %}

{% macro postgres__interval_days(days) -%}
    interval '{{ days }} days'
{%- endmacro %}
