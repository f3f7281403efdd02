{#- Lists: DuckDB's list functions and lambdas, PostgreSQL's arrays and unnest with ordinality.
    Lists keep their order on both engines; a sorted list sorts by code point. -#}

{% macro split_to_list(value, delimiter) -%}
    {#- value split at every delimiter (a SQL expression), in order; null for null. -#}
    {{ return(adapter.dispatch('split_to_list', 'dmf_watch')(value, delimiter)) }}
{%- endmacro %}

{% macro default__split_to_list(value, delimiter) -%}
    string_to_array({{ value }}, {{ delimiter }})
{%- endmacro %}

{% macro duckdb__split_to_list(value, delimiter) -%}
    string_split({{ value }}, {{ delimiter }})
{%- endmacro %}


{% macro list_transform_filter(list, name, transform, condition) -%}
    {#- The elements of `list` (in order) transformed by `transform` and kept when `condition`
        holds of the transformed element; both expressions name the element `name`. Null for
        null. -#}
    {{ return(adapter.dispatch('list_transform_filter', 'dmf_watch')(list, name, transform, condition)) }}
{%- endmacro %}

{% macro default__list_transform_filter(list, name, transform, condition) -%}
    case when {{ list }} is not null then array(
        select {{ name }}
        from (
            select {{ transform }} as {{ name }}, element_position
            from unnest({{ list }}) with ordinality as elements ({{ name }}, element_position)
        ) as transformed
        where {{ condition }}
        order by element_position
    ) end
{%- endmacro %}

{% macro duckdb__list_transform_filter(list, name, transform, condition) -%}
    list_filter(
        list_transform(
            {{ list }},
            lambda {{ name }}: {{ transform }}
        ),
        lambda {{ name }}: {{ condition }}
    )
{%- endmacro %}


{% macro list_has(list, element) -%}
    {{ return(adapter.dispatch('list_has', 'dmf_watch')(list, element)) }}
{%- endmacro %}

{% macro default__list_has(list, element) -%}
    ({{ element }} = any({{ list }}))
{%- endmacro %}

{% macro duckdb__list_has(list, element) -%}
    list_contains({{ list }}, {{ element }})
{%- endmacro %}


{% macro list_has_every(list, elements) -%}
    {#- every element of `elements` is in `list` (true for an empty `elements`). -#}
    {{ return(adapter.dispatch('list_has_every', 'dmf_watch')(list, elements)) }}
{%- endmacro %}

{% macro default__list_has_every(list, elements) -%}
    ({{ list }} @> {{ elements }})
{%- endmacro %}

{% macro duckdb__list_has_every(list, elements) -%}
    list_has_all({{ list }}, {{ elements }})
{%- endmacro %}


{% macro sorted_distinct_list_agg(value) -%}
    {#- The distinct non-null values of a group as a list sorted by code point. -#}
    {{ return(adapter.dispatch('sorted_distinct_list_agg', 'dmf_watch')(value)) }}
{%- endmacro %}

{% macro default__sorted_distinct_list_agg(value) -%}
    array_agg(distinct {{ dmf_watch.bytewise(value) }} order by {{ dmf_watch.bytewise(value) }})
        filter (where {{ value }} is not null)
{%- endmacro %}

{% macro duckdb__sorted_distinct_list_agg(value) -%}
    list_sort(list_distinct(list({{ value }})))
{%- endmacro %}


{% macro empty_list(element_type) -%}
    {{ return(adapter.dispatch('empty_list', 'dmf_watch')(element_type)) }}
{%- endmacro %}

{% macro default__empty_list(element_type) -%}
    cast(array[] as {{ element_type }}[])
{%- endmacro %}

{% macro duckdb__empty_list(element_type) -%}
    []
{%- endmacro %}


{% macro list_keep(list, name, condition) -%}
    {#- The elements of `list` (in order) for which `condition`, naming the element `name`, holds. -#}
    {{ return(adapter.dispatch('list_keep', 'dmf_watch')(list, name, condition)) }}
{%- endmacro %}

{% macro default__list_keep(list, name, condition) -%}
    case when {{ list }} is not null then array(
        select {{ name }}
        from unnest({{ list }}) with ordinality as elements ({{ name }}, element_position)
        where {{ condition }}
        order by element_position
    ) end
{%- endmacro %}

{% macro duckdb__list_keep(list, name, condition) -%}
    list_filter({{ list }}, lambda {{ name }}: {{ condition }})
{%- endmacro %}


{% macro list_transform_join(list, name, transform, separator) -%}
    {#- The elements of `list` transformed by `transform` (naming the element `name`) and joined,
        in order, with `separator` (a SQL expression). -#}
    {{ return(adapter.dispatch('list_transform_join', 'dmf_watch')(list, name, transform, separator)) }}
{%- endmacro %}

{% macro default__list_transform_join(list, name, transform, separator) -%}
    (
        select string_agg({{ transform }}, {{ separator }} order by element_position)
        from unnest({{ list }}) with ordinality as elements ({{ name }}, element_position)
    )
{%- endmacro %}

{% macro duckdb__list_transform_join(list, name, transform, separator) -%}
    array_to_string(list_transform({{ list }}, lambda {{ name }}: {{ transform }}), {{ separator }})
{%- endmacro %}


{% macro list_agg(value) -%}
    {#- The values of a group as a list, in no particular order. -#}
    {{ return(adapter.dispatch('list_agg', 'dmf_watch')(value)) }}
{%- endmacro %}

{% macro default__list_agg(value) -%}
    array_agg({{ value }})
{%- endmacro %}

{% macro duckdb__list_agg(value) -%}
    list({{ value }})
{%- endmacro %}


{% macro distinct_list_of(values, name, condition) -%}
    {#- The distinct values of a list literal of `values` (SQL expressions) for which `condition`
        (naming the value `name`) holds; DuckDB keeps no order, PostgreSQL sorts by code point. -#}
    {{ return(adapter.dispatch('distinct_list_of', 'dmf_watch')(values, name, condition)) }}
{%- endmacro %}

{% macro default__distinct_list_of(values, name, condition) -%}
    array(
        select distinct {{ dmf_watch.bytewise(name) }}
        from unnest(array[
            {{ values | join(',\n            ') }}
        ]) as elements ({{ name }})
        where {{ condition }}
        order by 1
    )
{%- endmacro %}

{% macro duckdb__distinct_list_of(values, name, condition) -%}
    list_distinct(list_filter([
        {{ values | join(',\n        ') }}
    ], lambda {{ name }}: {{ condition }}))
{%- endmacro %}


{% macro series_rows(start, stop) -%}
    {#- A set-returning select expression: one row per integer from start to stop. -#}
    {{ return(adapter.dispatch('series_rows', 'dmf_watch')(start, stop)) }}
{%- endmacro %}

{% macro default__series_rows(start, stop) -%}
    generate_series({{ start }}, {{ stop }})
{%- endmacro %}

{% macro duckdb__series_rows(start, stop) -%}
    unnest(generate_series({{ start }}, {{ stop }}))
{%- endmacro %}


{% macro list_max_transform(list, name, transform) -%}
    {#- The largest of a list's elements transformed by `transform` (naming the element `name`);
        null for an empty or null list. -#}
    {{ return(adapter.dispatch('list_max_transform', 'dmf_watch')(list, name, transform)) }}
{%- endmacro %}

{% macro default__list_max_transform(list, name, transform) -%}
    (
            select max({{ transform }})
            from unnest({{ list }}) as elements ({{ name }})
        )
{%- endmacro %}

{% macro duckdb__list_max_transform(list, name, transform) -%}
    list_max(list_transform({{ list }},
            lambda {{ name }}: {{ transform }}))
{%- endmacro %}


{% macro list_intersection_size(left, right) -%}
    {#- How many distinct elements two lists share; null when either is null. -#}
    {{ return(adapter.dispatch('list_intersection_size', 'dmf_watch')(left, right)) }}
{%- endmacro %}

{% macro default__list_intersection_size(left, right) -%}
    case
            when {{ left }} is not null and {{ right }} is not null then (
                select count(distinct element)
                from unnest({{ left }}) as elements (element)
                where element = any({{ right }})
            )
        end
{%- endmacro %}

{% macro duckdb__list_intersection_size(left, right) -%}
    len(list_intersect({{ left }}, {{ right }}))
{%- endmacro %}
