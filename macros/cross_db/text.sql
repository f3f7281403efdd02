{#- Text functions whose answer depends on the engine's Unicode tables or the server's locale.
    DuckDB's lower/upper follow utf8proc's simple case mapping on every code point; PostgreSQL's
    follow the collation's ctype (ASCII only under "C"), so there they fold ASCII under "C" and
    then every other letter through the table DuckDB itself gives (unicode_tables.sql), and only
    text that holds such a letter pays for the translate. -#}

{% macro text_lower(value) -%}
    {{ return(adapter.dispatch('text_lower', 'dmf_watch')(value)) }}
{%- endmacro %}

{% macro default__text_lower(value) -%}
    lower({{ value }})
{%- endmacro %}

{% macro postgres__text_lower(value) -%}
    (case
        when {{ value }} ~ '[{{ dmf_watch.postgres_lower_trigger_class() }}]'
            then translate(lower({{ value }} collate "C"), U&'{{ dmf_watch.postgres_lower_from() }}', U&'{{ dmf_watch.postgres_lower_to() }}')
        else lower({{ value }} collate "C")
    end)
{%- endmacro %}


{% macro text_upper(value) -%}
    {{ return(adapter.dispatch('text_upper', 'dmf_watch')(value)) }}
{%- endmacro %}

{% macro default__text_upper(value) -%}
    upper({{ value }})
{%- endmacro %}

{% macro postgres__text_upper(value) -%}
    (case
        when {{ value }} ~ '[{{ dmf_watch.postgres_upper_trigger_class() }}]'
            then translate(upper({{ value }} collate "C"), U&'{{ dmf_watch.postgres_upper_from() }}', U&'{{ dmf_watch.postgres_upper_to() }}')
        else upper({{ value }} collate "C")
    end)
{%- endmacro %}


{% macro bytewise(value) -%}
    {#- Text that sorts and compares by code point (DuckDB's only order): on PostgreSQL the "C"
        collation, whatever the server's default. For order by, min/max and tie-breaks on text. -#}
    {{ return(adapter.dispatch('bytewise', 'dmf_watch')(value)) }}
{%- endmacro %}

{% macro default__bytewise(value) -%}
    {{ value }}
{%- endmacro %}

{% macro postgres__bytewise(value) -%}
    ({{ value }} collate "C")
{%- endmacro %}


{% macro trim_spaces(value) -%}
    {#- A text without the space separators at either end. DuckDB's trim() strips every Unicode
        space separator (Zs: U+0020, U+00A0, U+1680, U+2000-U+200A, U+202F, U+205F, U+3000),
        PostgreSQL's only U+0020, so there they are listed. -#}
    {{ return(adapter.dispatch('trim_spaces', 'dmf_watch')(value)) }}
{%- endmacro %}

{% macro default__trim_spaces(value) -%}
    trim({{ value }})
{%- endmacro %}

{% macro postgres__trim_spaces(value) -%}
    btrim({{ value }}, U&' \00a0\1680\2000\2001\2002\2003\2004\2005\2006\2007\2008\2009\200a\202f\205f\3000')
{%- endmacro %}
