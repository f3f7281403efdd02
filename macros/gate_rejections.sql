{#- A gate that fires fails `dbt build` (the test assert_no_integrity_gate_fired), which skips
    every model that publishes events; dmf_loads already shows the load as rejected by the
    signals that fired. The on-run-end hook `record_fired_gates(results)` then makes the
    rejection stick, in every dbt command that ran the gate test (plain `dbt build` as much as
    `dmf build`): the fired load's signals are recorded in the raw layer, so the next build
    compares new loads with the last accepted one and a full refresh reproduces the same
    history. A build holding several new loads (a backfill) records one rejection per build, the
    earliest, so each later load is judged against the loads that were really accepted before it
    (`dmf build` builds again until no new rejection is recorded). -#}

{% macro raw_schema() -%}
    {{ return(var('raw_schema', schema_prefixed('mfds_raw'))) }}
{%- endmacro %}


{% macro create_gate_rejections() -%}
    create schema if not exists {{ raw_schema() }};
    {{ gate_rejections_table() }}
{%- endmacro %}


{% macro gate_rejections_table() -%}
    create table if not exists {{ raw_schema() }}.rejected_load_signals (
        {%- for name, type in signal_columns() %}
        {{ name }} {{ type }},
        {%- endfor %}
        recorded_at timestamp with time zone
    )
{%- endmacro %}


{% macro gate_signals_relation() -%}
    {#- int_load_signals as dbt built it: the node's own database, schema and alias from the
        graph, so a renamed schema, an alias or a custom generate_schema_name is followed. A
        model dbt cannot read back (disabled, ephemeral, never built, not a table or view) is
        an error, never a silent no-op: a rejection that is not recorded would make every
        later build compare with the rejected load. -#}
    {%- set nodes = graph.nodes.values()
        | selectattr('resource_type', 'equalto', 'model')
        | selectattr('name', 'equalto', 'int_load_signals')
        | list -%}
    {%- if nodes | length != 1 -%}
        {{ exceptions.raise_compiler_error(
            'cannot record the gate rejection: the project has no enabled model int_load_signals') }}
    {%- endif -%}
    {%- set node = nodes[0] -%}
    {%- if node.config.materialized == 'ephemeral' -%}
        {{ exceptions.raise_compiler_error(
            'cannot record the gate rejection: int_load_signals is ephemeral, so the warehouse has no relation to read its signals from') }}
    {%- endif -%}
    {%- set relation = adapter.get_relation(
        database=node.database, schema=node.schema, identifier=node.alias or node.name) -%}
    {%- set where = [node.database, node.schema, node.alias or node.name] | select | join('.') -%}
    {%- if relation is none -%}
        {{ exceptions.raise_compiler_error(
            'cannot record the gate rejection: int_load_signals is not in the warehouse at ' ~ where) }}
    {%- endif -%}
    {%- if relation.type not in ['table', 'view'] -%}
        {{ exceptions.raise_compiler_error(
            'cannot record the gate rejection: ' ~ where ~ ' is a ' ~ relation.type ~ ', not a table or view') }}
    {%- endif -%}
    {{ return(relation) }}
{%- endmacro %}


{% macro record_fired_gates(results) -%}
    {#- on-run-end hook: when the gate test failed in this command, records the earliest fired
        load that is neither recorded nor accepted by a person, and logs which one. Idempotent:
        a load already recorded is never recorded again, so a second build (or hook) adds
        nothing. The gate test is found by its name in dbt's graph; a project without it is an
        error, never a silent no-op. Renders no SQL of its own. -#}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set gate_test = 'assert_no_integrity_gate_fired' -%}
    {%- set gates = graph.nodes.values()
        | selectattr('resource_type', 'equalto', 'test')
        | selectattr('name', 'equalto', gate_test)
        | list -%}
    {%- if gates | length != 1 -%}
        {{ exceptions.raise_compiler_error(
            'cannot record the gate rejection: the project has no test ' ~ gate_test) }}
    {%- endif -%}
    {%- set fired = results
        | selectattr('node.unique_id', 'equalto', gates[0].unique_id)
        | selectattr('status', 'equalto', 'fail')
        | list -%}
    {%- if fired | length > 0 -%}
        {%- do record_gate_rejections() -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}


{% macro record_gate_rejections() -%}
    {#- Records the earliest fired load that is neither recorded nor accepted by a person, and
        logs which one (or that none was new). Called by the on-run-end hook after the gate test
        failed; `dbt run-operation record_gate_rejections` does the same by hand. -#}
    {%- if not execute -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set signals = gate_signals_relation() -%}
    {%- do run_query('create schema if not exists ' ~ raw_schema()) -%}
    {%- do run_query(gate_rejections_table()) -%}
    {%- set earliest -%}
        {#- Only the earliest fired load: a later load of the same build was compared with it,
            and must be judged again against the last accepted load (dmf_watch/transform/build.py builds
            again until no gate fires), exactly as if the days had been built one by one. -#}
        select load_id
        from {{ signals }}
        where is_gate and fired and not accepted_by_person
            and load_id not in (select load_id from {{ raw_schema() }}.rejected_load_signals)
        order by as_of_date, {{ bytewise('load_id') }}
        limit 1
    {%- endset -%}
    {%- set found = run_query(earliest) -%}
    {%- if found.rows | length == 0 -%}
        {%- do commit_hook_queries() -%}
        {%- do log('gate rejections: no new fired load to record', info=true) -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set load_id = found.rows[0][0] -%}
    {%- set insert -%}
        insert into {{ raw_schema() }}.rejected_load_signals
        select
            {{ signal_column_list() }}
            current_timestamp
        from {{ signals }}
        where load_id = ({{ earliest }})
    {%- endset -%}
    {%- do run_query(insert) -%}
    {%- do commit_hook_queries() -%}
    {%- do log('gate rejections: recorded load ' ~ load_id ~ ' as rejected (from ' ~ signals ~ '); '
        ~ 'the marts show it rejected, and every later build compares with the last accepted load', info=true) -%}
{%- endmacro %}
