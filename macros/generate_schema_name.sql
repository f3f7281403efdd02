{% macro generate_schema_name(custom_schema_name, node) -%}
    {#- Layers get their own plain schema names (staging, intermediate, marts, seeds) so that
        report SQL, the AI layer and analysts can use `marts.dmf_events` on every target. -#}
    {%- if custom_schema_name is none -%}
        {{ target.schema }}
    {%- else -%}
        {{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}
