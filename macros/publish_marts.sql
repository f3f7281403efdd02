{#- Readers (BI tools, `dmf status`, `dmf report`, notify) see the marts of the last complete
    build and never a half-built day. dbt builds the marts layer into `<marts>_build`
    (generate_schema_name); the on-run-end hook `publish_marts(results)` then replaces every
    published mart in `<marts>` with the one just built, in one transaction, and records the
    publication in the raw layer in the same transaction. A build that stops anywhere before
    that commit (SIGTERM, kill -9, a deadline, a failed node, a lock wait) leaves `<marts>` as
    the last complete build left it. -#}

{% macro published_marts_schema() -%}
    {#- The schema readers read: the marts layer's `+schema` in dbt_project.yml, prefixed. -#}
    {{ return(schema_prefixed('marts')) }}
{%- endmacro %}


{% macro marts_build_schema() -%}
    {{ return(published_marts_schema() ~ '_build') }}
{%- endmacro %}


{% macro mart_nodes() -%}
    {#- The models of the published layer: those dbt builds into the marts' build schema. -#}
    {{ return(graph.nodes.values()
        | selectattr('resource_type', 'equalto', 'model')
        | selectattr('schema', 'equalto', marts_build_schema())
        | list) }}
{%- endmacro %}


{% macro publish_marts(results) -%}
    {#- on-run-end hook. Publishes only a complete build: every mart of the project built in
        this command, the gate test run and passed, and no node failed, errored or skipped.
        Anything less (a `--select`, `dbt test`, a fired gate, a failed test) publishes nothing
        and says why in one log line; the readers keep the last complete build. -#}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set marts = mart_nodes() -%}
    {%- set built = results
        | selectattr('node.resource_type', 'equalto', 'model')
        | selectattr('status', 'equalto', 'success')
        | map(attribute='node.unique_id')
        | list -%}
    {%- set missing = marts | rejectattr('unique_id', 'in', built) | map(attribute='name') | list -%}
    {%- set broken = results
        | selectattr('status', 'in', ['error', 'fail', 'skipped', 'runtime error'])
        | list -%}
    {%- set gate = results | selectattr('node.name', 'equalto', 'assert_no_integrity_gate_fired') | list -%}
    {%- set gate_passed = gate | selectattr('status', 'equalto', 'pass') | list -%}
    {%- set gate_fired = gate | selectattr('status', 'equalto', 'fail') | list -%}
    {%- if marts | length == 0 -%}
        {{ exceptions.raise_compiler_error(
            'cannot publish the marts: no model is built into ' ~ marts_build_schema()) }}
    {%- endif -%}
    {%- if broken | length > 0 or missing | length > 0 or gate_passed | length == 0 -%}
        {%- set why = 'an integrity gate fired (its rejection is recorded; the next build publishes the day as rejected)'
            if gate_fired | length > 0
            else (broken | length ~ ' node(s) failed or skipped') if broken | length > 0
            else (missing | length ~ ' of ' ~ marts | length ~ ' marts not built by this command') if missing | length > 0
            else 'the integrity gate did not run' -%}
        {%- do log('marts not published: ' ~ why ~ '; readers keep the last complete build', info=true) -%}
        {{ return('') }}
    {%- endif -%}
    {%- do publish_mart_relations(marts) -%}
    {%- do log('marts published: ' ~ marts | length ~ ' marts replaced in ' ~ published_marts_schema()
        ~ ' in one transaction', info=true) -%}
    {{ return('') }}
{%- endmacro %}


{% macro publication_record(marts) -%}
    {#- The publication, recorded in the raw layer inside the publishing transaction: which dbt
        invocation the readers now see, and when. -#}
    create table if not exists {{ raw_schema() }}.mart_publications (
        invocation_id varchar,
        published_at timestamp with time zone,
        mart_count integer
    );
    insert into {{ raw_schema() }}.mart_publications
    values ('{{ invocation_id }}', current_timestamp, {{ marts | length }});
{%- endmacro %}


{% macro publish_mart_relations(marts) -%}
    {{ return(adapter.dispatch('publish_mart_relations', 'dmf_watch')(marts)) }}
{%- endmacro %}


{% macro default__publish_mart_relations(marts) -%}
    {#- DuckDB cannot move a table to another schema: each mart is copied whole, in one
        transaction, which DuckDB's write-ahead log commits all or nothing. -#}
    {%- set published = published_marts_schema() -%}
    {%- set statements = ['create schema if not exists ' ~ published] -%}
    {%- for node in marts -%}
        {%- set name = node.alias or node.name -%}
        {%- do statements.append('create or replace table ' ~ published ~ '.' ~ name
            ~ ' as select * from ' ~ node.schema ~ '.' ~ name) -%}
    {%- endfor -%}
    {%- do run_query(statements | join(';\n') ~ ';\n' ~ publication_record(marts)) -%}
    {%- do commit_hook_queries() -%}
{%- endmacro %}


{% macro postgres__publish_mart_relations(marts) -%}
    {#- PostgreSQL moves each built table into the published schema (no copy) inside one
        transaction: a reader sees every old mart or every new one. Dropping a mart waits for
        readers holding it (a BI session idle in transaction) up to the session's lock_timeout,
        and then the whole transaction rolls back. `cascade`, as dbt's own table swap does: a
        view someone made on a mart would otherwise block every morning. -#}
    {%- set published = published_marts_schema() -%}
    {%- set statements = ['create schema if not exists ' ~ published] -%}
    {%- for node in marts -%}
        {%- set name = node.alias or node.name -%}
        {%- do statements.append('drop table if exists ' ~ published ~ '.' ~ name ~ ' cascade') -%}
        {%- do statements.append('alter table ' ~ node.schema ~ '.' ~ name ~ ' set schema ' ~ published) -%}
    {%- endfor -%}
    {%- do run_query(statements | join(';\n') ~ ';\n' ~ publication_record(marts)) -%}
    {%- do commit_hook_queries() -%}
{%- endmacro %}
