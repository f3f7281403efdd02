{#- Types the project names that dbt's type macros do not give the same on both engines:
    dbt.type_float() is DuckDB's 4-byte FLOAT, and sum() of bigints is DuckDB's HUGEINT but
    PostgreSQL's numeric. Used in casts and in the data_type of enforced contracts. -#}

{% macro type_double() -%}
    {#- An 8-byte float: DuckDB's double, PostgreSQL's double precision. -#}
    {{ return(adapter.dispatch('type_double', 'dmf_watch')()) }}
{%- endmacro %}

{% macro default__type_double() -%}double{%- endmacro %}

{% macro postgres__type_double() -%}double precision{%- endmacro %}


{% macro type_bigint_sum() -%}
    {#- The type of sum() over bigints: DuckDB's hugeint, PostgreSQL's numeric. -#}
    {{ return(adapter.dispatch('type_bigint_sum', 'dmf_watch')()) }}
{%- endmacro %}

{% macro default__type_bigint_sum() -%}hugeint{%- endmacro %}

{% macro postgres__type_bigint_sum() -%}numeric{%- endmacro %}
