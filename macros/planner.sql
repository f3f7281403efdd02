{#- What PostgreSQL's planner needs to plan each model on the rows it really holds (issue 40).

    Statistics refreshed where rows arrive. Autoanalyze runs only once about a tenth of a table has
    changed and up to a minute later: from about day 10 a morning's load (9,200 rows) never
    triggers it, the planner takes the new load for one row and chooses nested loops that rescan
    all of history per row (82 s to 185 s a model instead of under a second). DuckDB keeps the
    statistics of a table as it writes it: nothing to do there. -#}

{% macro refresh_statistics() -%}
    {#- Post-hook of every model (dbt_project.yml): the table a model just wrote or appended to. -#}
    {%- if model.config.materialized in ['table', 'incremental'] -%}
        {{ return(adapter.dispatch('refresh_statistics', 'dmf_watch')(this)) }}
    {%- endif -%}
{%- endmacro %}

{% macro default__refresh_statistics(relation) -%}
{%- endmacro %}

{% macro postgres__refresh_statistics(relation) -%}
    analyze {{ relation }}
{%- endmacro %}


{% macro refresh_source_statistics() -%}
    {#- An on-run-start hook: the loader's tables, once a build, whatever appended to them since
        (one morning's load, or a backfill of a year of loads: analyzing once, before the first
        model reads them, costs one sample however many loads arrived). -#}
    {%- if not execute or flags.WHICH not in ['build', 'run'] -%}
        {{ return('') }}
    {%- endif -%}
    {{ return(adapter.dispatch('refresh_source_statistics', 'dmf_watch')()) }}
{%- endmacro %}

{% macro default__refresh_source_statistics() -%}
{%- endmacro %}

{% macro postgres__refresh_source_statistics() -%}
    {%- for source_node in graph.sources.values() if source_node.source_name == 'mfds' -%}
        {%- set relation = adapter.get_relation(source_node.database, source_node.schema, source_node.identifier) -%}
        {%- if relation is not none %}
    analyze {{ relation }};
        {%- endif -%}
    {%- endfor -%}
{%- endmacro %}


{% macro create_declared_indexes() -%}
    {#- An on-run-start hook: on PostgreSQL, the indexes a table of the loader's or a model
        declares (`meta: {postgres_indexes: [[column, ...], ...]}`; a source in
        models/staging/mfds/_mfds__sources.yml, a model in its config), created when missing on
        each such table that exists. The loader (dlt) creates its tables, and dbt's `indexes`
        config indexes a model's table only when it creates it (a full refresh), so an existing
        warehouse would wait for one; and an incremental model reads its own table (its
        watermark, macros/incremental_loads.sql) while it compiles, before any hook of its own
        runs. Before refresh_source_statistics, so that the analyze sees the index. -#}
    {%- if not execute or flags.WHICH not in ['build', 'run'] -%}
        {{ return('') }}
    {%- endif -%}
    {{ return(adapter.dispatch('create_declared_indexes', 'dmf_watch')()) }}
{%- endmacro %}

{% macro default__create_declared_indexes() -%}
{%- endmacro %}

{% macro postgres__create_declared_indexes() -%}
    {#- Only the missing ones, each in a block that turns a role not owning the table (a DBA's
        layout) into a warning: the morning then reads as it did without the index (held_loads
        checks the index before it walks it), rather than stopping. -#}
    {%- set declared = [] -%}
    {%- for source_node in graph.sources.values() if source_node.source_name == 'mfds' -%}
        {%- do declared.append((source_node.database, source_node.schema, source_node.identifier, source_node.config.meta)) -%}
    {%- endfor -%}
    {%- for node in graph.nodes.values() if node.resource_type == 'model' and node.package_name == project_name -%}
        {%- do declared.append((node.database, node.schema, node.alias, node.config.meta)) -%}
    {%- endfor -%}
    {%- for database, schema, identifier, meta in declared -%}
        {%- set indexes = meta.get('postgres_indexes', []) -%}
        {%- set relation = adapter.get_relation(database, schema, identifier) if indexes else none -%}
        {%- if relation is not none and relation.is_table -%}
            {%- for columns in indexes -%}
                {%- set name = declared_index_name(identifier, columns) -%}
                {%- if not postgres_index_exists(schema, name) %}
    do $dmf_index$ begin
        create index if not exists {{ adapter.quote(name) }} on {{ relation }} ({{ columns | join(', ') }});
    exception when insufficient_privilege then
        raise warning 'dmf: no index {{ name }} on {{ relation | replace("'", "''") }}: this role does not own the table';
    end $dmf_index$;
                {%- endif -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
{%- endmacro %}

{% macro declared_index_name(identifier, columns) -%}
    {#- The name create_declared_indexes gives an index: the table's, then its columns. -#}
    {{ return(identifier ~ '__' ~ columns | join('__')) }}
{%- endmacro %}

{% macro postgres_index_exists(schema, name) -%}
    {%- set query -%}
    select count(*) from pg_indexes where schemaname = '{{ schema }}' and indexname = '{{ name }}'
    {%- endset -%}
    {{ return(run_query(query).columns[0].values()[0] | int > 0) }}
{%- endmacro %}


{% macro without_nested_loops() -%}
    {#- A pre-hook for a model whose plan is measured to need it: PostgreSQL plans the model's
        statement (its transaction: `set local`) without nested loops. Where a filter on a
        window's result keeps nearly every row, the planner, which cannot see that, takes the
        result for a few rows and joins it by rescanning it per row. Each use says what it
        measured. -#}
    {{ return(adapter.dispatch('without_nested_loops', 'dmf_watch')()) }}
{%- endmacro %}

{% macro default__without_nested_loops() -%}
{%- endmacro %}

{% macro postgres__without_nested_loops() -%}
    set local enable_nestloop = off
{%- endmacro %}


{% macro without_jit() -%}
    {#- A pre-hook for a model measured to spend more time compiling its plan than running it:
        PostgreSQL compiles a plan to machine code (JIT) once its estimated cost passes
        `jit_above_cost`, and a recursive CTE or a CTE read several times is estimated at
        thousands of times its rows (the planner keeps no statistics for either). A morning
        reads one day's records, so the compile is seconds spent on a query of tenths. Each use
        says what it measured. -#}
    {{ return(adapter.dispatch('without_jit', 'dmf_watch')()) }}
{%- endmacro %}

{% macro default__without_jit() -%}
{%- endmacro %}

{% macro postgres__without_jit() -%}
    set local jit = off
{%- endmacro %}


{% macro planned_apart() -%}
    {#- Ends a subquery that PostgreSQL must plan on its own (each use says why): `offset 0`,
        which changes no row, keeps the planner from merging the subquery into the query around
        it. For a lookup of a few rows by an indexed key through a view such as
        stg_mfds__load_items: merged, the lookup becomes a hash join over every row of the table,
        because no join reaches an index through a UNION ALL view; kept apart, the few keys are
        found first, and a LATERAL subquery ended the same way probes the index once per key,
        with the key as a parameter. DuckDB plans both as joins of its own, well: nothing is
        added there. -#}
    {{ return(adapter.dispatch('planned_apart', 'dmf_watch')()) }}
{%- endmacro %}

{% macro default__planned_apart() -%}
{%- endmacro %}

{% macro postgres__planned_apart() -%}
    offset 0
{%- endmacro %}
