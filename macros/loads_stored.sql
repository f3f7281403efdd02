{#- The first on-run-start hook: a warehouse that holds no load stops dbt at once, with one line
    saying to load first, before any model, seed or raw table is made (`dbt build`, `run`, `test`). dbt creates the schemas
    of the project before this hook runs, so the ones still empty are dropped again (never one
    that holds anything): a fresh clone's `dbt build` leaves the warehouse as it found it
    instead of a half-built one that every later command would take for a broken build. -#}

{% macro check_loads_stored() -%}
    {#- Only the commands that build from loads need one: `dbt seed`, `dbt docs generate` and the
        like work on any warehouse; a tool that builds a few models on purpose from tables it
        made itself (benchmarks/eval_watch_terms.py) says so with --vars '{without_loads: true}'. -#}
    {%- if not execute or flags.WHICH not in ['build', 'run', 'test'] or var('without_loads', false) -%}
        {{ return('') }}
    {%- endif -%}
    {%- set loader_tables = ['dmf_item_versions', 'dmf_load_items', 'load_runs'] -%}
    {%- set wanted = graph.sources.values()
        | selectattr('source_name', 'equalto', 'mfds')
        | selectattr('name', 'in', loader_tables)
        | list -%}
    {%- if wanted | length != loader_tables | length -%}
        {{ exceptions.raise_compiler_error(
            'the source mfds must declare the loader tables ' ~ loader_tables | join(', ')) }}
    {%- endif -%}
    {%- set raw = wanted[0] -%}
    {%- set found = run_query(
        "select table_name from information_schema.tables where table_catalog = '" ~ raw.database
        ~ "' and table_schema = '" ~ raw.schema ~ "'") -%}
    {#- on-run-* hooks run outside a transaction (dbt clears it first); the query opened one, so it
        is closed here, or the hooks after this one would run inside it and never be committed. -#}
    {%- do commit_hook_queries() -%}
    {%- set present = found.columns[0].values() -%}
    {%- set missing = [] -%}
    {%- for source_node in wanted if source_node.identifier not in present -%}
        {%- do missing.append(source_node.schema ~ '.' ~ source_node.identifier) -%}
    {%- endfor -%}
    {%- if missing | length == 0 -%}
        {{ return('') }}
    {%- endif -%}
    {%- do drop_empty_project_schemas() -%}
    {{ exceptions.raise_compiler_error(
        'the warehouse ' ~ (target.get('path') or target.get('dbname', '') ~ ' on ' ~ target.get('host', '')) ~ ' holds no load yet (' ~ missing | sort | join(', ')
        ~ ' missing): load first with `dmf run` (or `dmf load`), or try `dmf demo`; '
        ~ '`dbt build` rebuilds from loads already stored.') }}
{%- endmacro %}


{% macro drop_empty_project_schemas() -%}
    {#- The schemas dbt made for this project's models, seeds and snapshots, dropped when they
        hold no table or view; the raw layer is the loader's and stays. -#}
    {%- set schemas = [] -%}
    {%- for node in graph.nodes.values()
        if node.resource_type in ['model', 'seed', 'snapshot'] and node.schema != raw_schema() -%}
        {%- if (node.database, node.schema) not in schemas -%}
            {%- do schemas.append((node.database, node.schema)) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- for database, schema in schemas | sort -%}
        {%- set held = run_query(
            "select count(*) from information_schema.tables where table_catalog = '" ~ database
            ~ "' and table_schema = '" ~ schema ~ "'") -%}
        {%- if held.rows[0][0] == 0 -%}
            {%- do drop_empty_schema(database, schema) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- do commit_hook_queries() -%}
{%- endmacro %}
