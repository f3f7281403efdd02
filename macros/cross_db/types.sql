{#- A type dbt's type macros do not give: dbt.type_float() is DuckDB's 4-byte FLOAT. Used in
    casts; a contract's data_type names the same type with target.type (schema YAML cannot call
    a macro). -#}

{% macro type_double() -%}
    {#- An 8-byte float: DuckDB's double, PostgreSQL's double precision. -#}
    {{ return(adapter.dispatch('type_double', 'dmf_watch')()) }}
{%- endmacro %}

{% macro default__type_double() -%}double precision{%- endmacro %}

{% macro duckdb__type_double() -%}double{%- endmacro %}
