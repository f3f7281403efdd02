{#- Aggregates DuckDB has and PostgreSQL spells differently. -#}

{% macro arg_max(value, ordering, tie_break=none) -%}
    {#- value of the row with the largest ordering (rows with a null ordering ignored); of rows
        with the same ordering, the one first by `tie_break` (without it, any one of them). -#}
    {{ return(adapter.dispatch('arg_max', 'dmf_watch')(value, ordering, tie_break)) }}
{%- endmacro %}

{% macro default__arg_max(value, ordering, tie_break=none) -%}
    (array_agg({{ value }} order by {{ ordering }} desc{{ ', ' ~ tie_break if tie_break is not none }})
        filter (where {{ ordering }} is not null))[1]
{%- endmacro %}

{% macro duckdb__arg_max(value, ordering, tie_break=none) -%}
    {%- if tie_break is none -%}
    max_by({{ value }}, {{ ordering }})
    {%- else -%}
    (list({{ value }} order by {{ ordering }} desc, {{ tie_break }}) filter (where {{ ordering }} is not null))[1]
    {%- endif -%}
{%- endmacro %}


{% macro median(value) -%}
    {#- The median (interpolated, as a double) of a group. -#}
    {{ return(adapter.dispatch('median', 'dmf_watch')(value)) }}
{%- endmacro %}

{% macro default__median(value) -%}
    percentile_cont(0.5) within group (order by {{ value }})
{%- endmacro %}

{% macro duckdb__median(value) -%}
    median({{ value }})
{%- endmacro %}


{% macro trailing_days_median(value, relation, date_column, days) -%}
    {#- The median of `value` over the rows of `relation` (the query's own, unaliased) dated from
        `days` days before the row's date to the day before it. DuckDB computes it as a window;
        PostgreSQL has no ordered-set aggregate over a window, so it reads the same rows in a
        correlated subquery. -#}
    {{ return(adapter.dispatch('trailing_days_median', 'dmf_watch')(value, relation, date_column, days)) }}
{%- endmacro %}

{% macro default__trailing_days_median(value, relation, date_column, days) -%}
    (
        select percentile_cont(0.5) within group (order by {{ value }})
        from {{ relation }} as trailing_rows
        where trailing_rows.{{ date_column }} between {{ relation }}.{{ date_column }} - {{ days }}
            and {{ relation }}.{{ date_column }} - 1
    )
{%- endmacro %}

{% macro duckdb__trailing_days_median(value, relation, date_column, days) -%}
    median({{ value }}) over (order by {{ date_column }} range between interval {{ days }} days preceding and interval 1 day preceding)
{%- endmacro %}


{% macro any_equal_value(value) -%}
    {#- Aggregate - a non-null value of the group, for a group whose values are all equal. DuckDB's
        any_value (dbt.any_value renders DuckDB's arbitrary(), which may return a null), and
        PostgreSQL's min (15 has no any_value). -#}
    {{ return(adapter.dispatch('any_equal_value', 'dmf_watch')(value)) }}
{%- endmacro %}

{% macro default__any_equal_value(value) -%}
    min({{ value }})
{%- endmacro %}

{% macro duckdb__any_equal_value(value) -%}
    any_value({{ value }})
{%- endmacro %}
