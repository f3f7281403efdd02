{#- What the hooks do that the engines spell differently. Hooks run outside dbt's
    transactions. A query a hook runs with run_query opens one on DuckDB that dbt knows of, so
    it is committed through dbt; on PostgreSQL dbt opens none
    (run_query does not begin one, and adapter.commit() then fails), while psycopg2 still runs
    the statements in a transaction of its own, so it is committed with a COMMIT statement (a
    warning, never an error, when there is nothing to commit). -#}

{% macro commit_hook_queries() -%}
    {{ return(adapter.dispatch('commit_hook_queries', 'dmf_watch')()) }}
{%- endmacro %}

{% macro default__commit_hook_queries() -%}
    {%- do adapter.commit() -%}
{%- endmacro %}

{% macro postgres__commit_hook_queries() -%}
    {%- do run_query('commit') -%}
{%- endmacro %}


{% macro drop_empty_schema(database, schema) -%}
    {#- Drops a schema the caller found empty; never cascades. PostgreSQL names a schema without
        its database (a connection sees one database). -#}
    {{ return(adapter.dispatch('drop_empty_schema', 'dmf_watch')(database, schema)) }}
{%- endmacro %}

{% macro default__drop_empty_schema(database, schema) -%}
    {%- do run_query('drop schema if exists ' ~ adapter.quote(database) ~ '.' ~ adapter.quote(schema)) -%}
{%- endmacro %}

{% macro postgres__drop_empty_schema(database, schema) -%}
    {%- do run_query('drop schema if exists ' ~ adapter.quote(schema)) -%}
{%- endmacro %}
