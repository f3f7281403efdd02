{#- JSON written as text exactly as DuckDB writes it: compact (no spaces), keys in the order
    given. PostgreSQL's json_build_object writes "k" : v with spaces and jsonb reorders keys, so
    there the text is built from to_json() of each value (the same escaping of strings). -#}

{% macro json_top_pairs(label, count, order_by, limit) -%}
    {#- Aggregate: a JSON array of [label, count] pairs of the group, ordered by `order_by`, the
        first `limit` of them. -#}
    {{ return(adapter.dispatch('json_top_pairs', 'dmf_watch')(label, count, order_by, limit)) }}
{%- endmacro %}

{% macro default__json_top_pairs(label, count, order_by, limit) -%}
    cast('[' || array_to_string(
        (array_agg('[' || to_json({{ label }})::text || ',' || to_json({{ count }})::text || ']' order by {{ order_by }}))[1:{{ limit }}],
        ','
    ) || ']' as json)
{%- endmacro %}

{% macro duckdb__json_top_pairs(label, count, order_by, limit) -%}
    to_json(list(json_array({{ label }}, {{ count }}) order by {{ order_by }})[1:{{ limit }}])
{%- endmacro %}


{% macro json_list_agg(value, order_by, condition) -%}
    {#- Aggregate: a JSON array of the values of the group where `condition` holds, ordered by
        `order_by`; null when none. -#}
    {{ return(adapter.dispatch('json_list_agg', 'dmf_watch')(value, order_by, condition)) }}
{%- endmacro %}

{% macro default__json_list_agg(value, order_by, condition) -%}
    cast('[' || string_agg(to_json({{ value }})::text, ',' order by {{ order_by }})
        filter (where {{ condition }}) || ']' as json)
{%- endmacro %}

{% macro duckdb__json_list_agg(value, order_by, condition) -%}
    to_json(
            list({{ value }} order by {{ order_by }})
                filter (where {{ condition }})
        )
{%- endmacro %}


{% macro json_object_of(members) -%}
    {#- A JSON object of `members`, a list of (key, SQL expression, kind): kind 'json' for a
        JSON value, 'value' for text, a number or a date (written as JSON; null as null). -#}
    {{ return(adapter.dispatch('json_object_of', 'dmf_watch')(members)) }}
{%- endmacro %}

{% macro default__json_object_of(members) -%}
    cast(
        '{'
        {%- for key, expression, kind in members %}
        || '{{ "," if not loop.first }}"{{ key }}":' || coalesce(
            {%- if kind == 'json' %} cast({{ expression }} as text)
            {%- else %} to_json({{ expression }})::text
            {%- endif %}, 'null')
        {%- endfor %}
        || '}'
    as json)
{%- endmacro %}

{% macro duckdb__json_object_of(members) -%}
    json_object(
            {%- for key, expression, kind in members %}
            '{{ key }}', {{ expression }}{{ ',' if not loop.last }}
            {%- endfor %}
        )
{%- endmacro %}
