{#- Regular expressions. DuckDB's are RE2 (\s is ASCII white space, \b an ASCII word boundary,
    (?i) folds by Unicode, \p{..} are Unicode classes); PostgreSQL's are Spencer AREs, whose
    classes and case folding follow the collation. Patterns are written once in RE2 and the
    default__ versions spell the same sets out explicitly, never through the locale. -#}

{% macro regex_matches(value, pattern) -%}
    {#- true when `pattern` (the pattern's text, not a SQL literal) matches somewhere in value. -#}
    {{ return(adapter.dispatch('regex_matches', 'dmf_watch')(value, pattern)) }}
{%- endmacro %}

{% macro default__regex_matches(value, pattern) -%}
    ({{ value }} ~ '{{ pattern }}')
{%- endmacro %}

{% macro duckdb__regex_matches(value, pattern) -%}
    regexp_matches({{ value }}, '{{ pattern }}')
{%- endmacro %}


{% macro regex_extract(value, pattern, group=none) -%}
    {#- The text of capture group `group` (0 or none: the whole match) of the first match; ''
        when there is none (DuckDB's regexp_extract), null for null. -#}
    {{ return(adapter.dispatch('regex_extract', 'dmf_watch')(value, pattern, group)) }}
{%- endmacro %}

{% macro default__regex_extract(value, pattern, group=none) -%}
    {%- if not group -%}
    coalesce((regexp_match({{ value }}, '({{ pattern }})'))[1], case when {{ value }} is not null then '' end)
    {%- else -%}
    coalesce((regexp_match({{ value }}, '{{ pattern }}'))[{{ group }}], case when {{ value }} is not null then '' end)
    {%- endif -%}
{%- endmacro %}

{% macro duckdb__regex_extract(value, pattern, group=none) -%}
    regexp_extract({{ value }}, '{{ pattern }}'{{ ', ' ~ group if group is not none }})
{%- endmacro %}


{% macro regex_space() -%}
    {#- RE2's \s: ASCII white space, never a locale's. -#}
    {{ return(adapter.dispatch('regex_space', 'dmf_watch')()) }}
{%- endmacro %}

{% macro default__regex_space() -%}[\t\n\f\r ]{%- endmacro %}

{% macro duckdb__regex_space() -%}\s{%- endmacro %}


{% macro regex_punctuation_symbol_space_class() -%}
    {#- A bracket expression of Unicode punctuation (P), symbols (S) and RE2's \s. -#}
    {{ return(adapter.dispatch('regex_punctuation_symbol_space_class', 'dmf_watch')()) }}
{%- endmacro %}

{% macro default__regex_punctuation_symbol_space_class() -%}
    [{{ dmf_watch.postgres_punctuation_symbol_class() }}\t\n\f\r ]
{%- endmacro %}

{% macro duckdb__regex_punctuation_symbol_space_class() -%}[\p{P}\p{S}\s]{%- endmacro %}


{% macro regex_case_insensitive_prefix(pattern) -%}
    {#- `pattern`, matched case-insensitively: RE2's (?i) in front on DuckDB; on PostgreSQL each
        ASCII letter becomes a class of its case forms, with the two non-ASCII letters RE2's
        Unicode folding adds (U+017F long s, U+212A Kelvin sign), \s becomes ASCII white space
        and \b a lookahead for a non-word character (RE2's \b is ASCII), since an ARE's (?i),
        \s and \y follow the collation. For patterns of letters, escapes, groups, | ? and ^. -#}
    {{ return(adapter.dispatch('regex_case_insensitive_prefix', 'dmf_watch')(pattern)) }}
{%- endmacro %}

{% macro default__regex_case_insensitive_prefix(pattern) -%}
    {%- set extra = {'k': '\\u212a', 's': '\\u017f'} -%}
    {%- set ns = namespace(out='', escaped=false) -%}
    {%- for ch in pattern -%}
        {%- if ns.escaped -%}
            {%- if ch == 's' -%}{%- set ns.out = ns.out ~ '[\\t\\n\\f\\r ]' -%}
            {%- elif ch == 'b' -%}{%- set ns.out = ns.out ~ '(?![0-9A-Za-z_])' -%}
            {%- else -%}{%- set ns.out = ns.out ~ '\\' ~ ch -%}
            {%- endif -%}
            {%- set ns.escaped = false -%}
        {%- elif ch == '\\' -%}
            {%- set ns.escaped = true -%}
        {%- elif ch.lower() in 'abcdefghijklmnopqrstuvwxyz' and ch.isalpha() -%}
            {%- set ns.out = ns.out ~ '[' ~ ch.lower() ~ ch.upper() ~ extra.get(ch.lower(), '') ~ ']' -%}
        {%- else -%}
            {%- set ns.out = ns.out ~ ch -%}
        {%- endif -%}
    {%- endfor -%}
    {{ ns.out }}
{%- endmacro %}

{% macro duckdb__regex_case_insensitive_prefix(pattern) -%}
    {%- if pattern.startswith('^') -%}^(?i){{ pattern[1:] }}{%- else -%}(?i){{ pattern }}{%- endif -%}
{%- endmacro %}
