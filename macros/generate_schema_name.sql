{% macro generate_schema_name(custom_schema_name, node) -%}
    {#- Layers get their own plain schema names (staging, intermediate, marts, seeds) so that
        report SQL, the AI layer and analysts can use `marts.dmf_events` on every target; a
        developer sharing a team's server sets DMF_SCHEMA_PREFIX and gets `alice_marts` and
        the like, the raw layer included (dmf_watch/core/warehouse.py applies the same rule).
        The marts layer is built into `marts_build` and published whole into `marts` by the
        on-run-end hook publish_marts (macros/publish_marts.sql), so no reader sees a
        half-built day. -#}
    {%- if custom_schema_name is none -%}
        {{ target.schema }}
    {%- elif schema_prefixed(custom_schema_name | trim) == published_marts_schema() -%}
        {{ marts_build_schema() }}
    {%- else -%}
        {{ schema_prefixed(custom_schema_name | trim) }}
    {%- endif -%}
{%- endmacro %}


{% macro schema_prefixed(name) -%}
    {%- set prefix = env_var('DMF_SCHEMA_PREFIX', '') | trim -%}
    {{- return(prefix ~ '_' ~ name if prefix else name) -}}
{%- endmacro %}
