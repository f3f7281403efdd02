{% macro severities() -%}
    {{ return(['CRITICAL', 'HIGH', 'MEDIUM', 'INFO', 'COSMETIC']) }}
{%- endmacro %}


{% macro severity_rank(column) -%}
    {#- 1 is the most urgent; sorts events the way RA staff read them. -#}
    case {{ column }}
        {%- for severity in severities() %}
        when '{{ severity }}' then {{ loop.index }}
        {%- endfor %}
    end
{%- endmacro %}


{% macro rule_applies(rule, event_type, field_name, on_watchlist, change_kind, change_detail) -%}
    {#- An empty cell in a severity rule matches anything. -#}
    {{ rule }}.event_type = {{ event_type }}
    and ({{ rule }}.field_name is null or {{ rule }}.field_name = {{ field_name }})
    and ({{ rule }}.on_watchlist is null or {{ rule }}.on_watchlist = {{ on_watchlist }})
    and ({{ rule }}.change_kind is null or {{ rule }}.change_kind = {{ change_kind }})
    and ({{ rule }}.change_detail is null or {{ rule }}.change_detail = {{ change_detail }})
{%- endmacro %}
