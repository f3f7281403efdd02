{#- The morning build's data tests read only the new loads of the tables that hold every record
    of every load, so that they cost the same on day 365 as on day 2; every other build (dmf
    build, backfill, a person's decision, a full refresh, CI) tests everything.

    `dmf run` passes the loads it is building for the first time in the environment variable
    DMF_TESTED_LOADS, a JSON list (dmf_watch/transform/build.py): the loads stored since the last build that
    succeeded. It is read only when tests run, never while dbt parses, so that partial parsing
    still holds. A table opts in with
    `meta: {tests_scoped_to_new_loads: true}` (it must have a load_id column); a test's own
    `where` still applies. Without the variable, nothing is scoped. -#}

{% macro get_where_subquery(relation) -%}
    {%- set conditions = [] -%}
    {%- set where = config.get('where') -%}
    {%- if where -%}
    {%- do conditions.append('(' ~ where ~ ')') -%}
    {%- endif -%}
    {%- set scope = new_loads_scope() -%}
    {%- if scope -%}
    {%- do conditions.append(scope) -%}
    {%- endif -%}
    {%- if conditions -%}
    {%- do return('(select * from ' ~ relation ~ ' where ' ~ conditions | join(' and ') ~ ') as dbt_subquery') -%}
    {%- else -%}
    {%- do return(relation) -%}
    {%- endif -%}
{%- endmacro %}


{% macro new_loads_scope() -%}
    {#- The condition on load_id for the tested table, or none. -#}
    {%- if not execute or flags.FULL_REFRESH -%}
    {%- do return(none) -%}
    {%- endif -%}
    {%- set listed = env_var('DMF_TESTED_LOADS', '') -%}
    {%- if not listed -%}
    {%- do return(none) -%}
    {%- endif -%}
    {%- set loads = fromjson(listed) -%}
    {%- set tested = graph.nodes.get(model.attached_node) if model.attached_node else none -%}
    {%- if tested is none or not tested.config.meta.get('tests_scoped_to_new_loads') -%}
    {%- do return(none) -%}
    {%- endif -%}
    {%- if loads | length == 0 -%}
    {%- do return('load_id is null and load_id is not null') -%}
    {%- endif -%}
    {%- set quoted = [] -%}
    {%- for load_id in loads -%}
    {%- do quoted.append("'" ~ (load_id | string | replace("'", "''")) ~ "'") -%}
    {%- endfor -%}
    {%- do return('load_id in (' ~ quoted | join(', ') ~ ')') -%}
{%- endmacro %}
