{% macro nfc(column) -%}
    {#- Unicode NFC: a Hangul name sent decomposed (NFD: jamo by jamo) or an accented Latin name
        with combining marks looks the same to a reader as the composed one, and must compare and
        match the same. The raw layer keeps the text as received; values the loader stored
        escaped (not valid UTF-8) are ASCII after their marker, which NFC leaves alone. -#}
    {{ return(adapter.dispatch('nfc', 'dmf_watch')(column)) }}
{%- endmacro %}

{% macro duckdb__nfc(column) -%}
    nfc_normalize({{ column }})
{%- endmacro %}

{% macro default__nfc(column) -%}
    normalize({{ column }}, NFC)
{%- endmacro %}


{% macro display_text(column) -%}
    {#- The value a person reads and the pipeline compares: NFC, CR/LF removed, runs of white
        space collapsed, trimmed; empty becomes null. Whitespace alone is never a change (SPEC §4). -#}
    nullif(trim(regexp_replace(replace(replace({{ nfc(column) }}, chr(13), ''), chr(10), ''), '\s+', ' ', 'g')), '')
{%- endmacro %}


{% macro comparison_key(column) -%}
    {#- Two values with the same key differ only cosmetically: full/half width, Roman numerals,
        case, brackets, punctuation and spacing are folded away. -#}
    nullif(
        regexp_replace(
            lower({{ fold_width(nfc(column)) }}),
            '[\p{P}\p{S}\s]', '', 'g'
        ),
        ''
    )
{%- endmacro %}


{% macro fold_width(column) -%}
    {#- A small NFKC: full-width ASCII to half width, the ideographic space, Roman numerals and
        the circled company mark that real MFDS records carry. -#}
    {%- set full = "！＂＃＄％＆＇（）＊＋，－．／０１２３４５６７８９：；＜＝＞？＠ＡＢＣＤＥＦＧＨＩＪＫＬＭＮＯＰＱＲＳＴＵＶＷＸＹＺ［＼］＾＿｀ａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐｑｒｓｔｕｖｗｘｙｚ｛｜｝～　" -%}
    {%- set half = "!\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~ " -%}
    {%- set romans = [("Ⅰ", "I"), ("Ⅱ", "II"), ("Ⅲ", "III"), ("Ⅳ", "IV"), ("Ⅴ", "V"), ("Ⅵ", "VI"), ("Ⅶ", "VII"), ("Ⅷ", "VIII"), ("Ⅸ", "IX"), ("Ⅹ", "X"), ("㈜", "(주)")] -%}
    {%- set ns = namespace(expr="translate(" ~ column ~ ", '" ~ full ~ "', '" ~ half | replace("'", "''") ~ "')") -%}
    {%- for source_char, target in romans -%}
        {%- set ns.expr = "replace(" ~ ns.expr ~ ", '" ~ source_char ~ "', '" ~ target ~ "')" -%}
    {%- endfor -%}
    {{ ns.expr }}
{%- endmacro %}


{% macro normalized_permit_no(column) -%}
    {#- The registration number as the identity match sees it: width folded, upper case, no spaces. -#}
    nullif(upper(regexp_replace({{ fold_width(nfc(column)) }}, '\s+', '', 'g')), '')
{%- endmacro %}


{% macro country_list(column) -%}
    {#- Countries as a sorted list joined with ", ": one entry per manufacturing site, so a
        repeat (`스페인,스페인`: two Spanish sites) is kept, and only the order is normalized. -#}
    {{ return(adapter.dispatch('country_list', 'dmf_watch')(column)) }}
{%- endmacro %}


{% macro duckdb__country_list(column) -%}
    {#- DuckDB's list functions: a correlated subquery here made DuckDB compute the countries of
        every record of every load before a reader's filter on its loads applied (3.45 s against
        0.07 s for one load of stg_mfds__items at day 365; the same values on 394,232 records). -#}
    nullif(array_to_string(list_sort(list_filter(
        list_transform(string_split({{ display_text(column) }}, ','), lambda country: trim(country)),
        lambda country: country <> ''
    )), ', '), '')
{%- endmacro %}


{% macro default__country_list(column) -%}
    (
        select nullif(string_agg(trim(country), ', ' order by trim(country)), '')
        from unnest(string_split({{ display_text(column) }}, ',')) as countries(country)
        where trim(country) <> ''
    )
{%- endmacro %}


{% macro safe_iso_date(column) -%}
    {{ return(adapter.dispatch('safe_iso_date', 'dmf_watch')(column)) }}
{%- endmacro %}

{% macro default__safe_iso_date(column) -%}
    case when {{ column }} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' then cast({{ column }} as date) end
{%- endmacro %}

{% macro duckdb__safe_iso_date(column) -%}
    cast(try_strptime({{ column }}, '%Y-%m-%d') as date)
{%- endmacro %}


{% macro undecodable_fields(columns) -%}
    {#- The fields (given as raw column: field name) whose text arrived as bytes that are not
        UTF-8, or as lone surrogates: the loader stores them escaped (a U+241B marker and an
        ASCII JSON string whose \udc80-\udcff escapes are the bytes), never replaced. Null when
        every field is readable text. -#}
    nullif(concat_ws(', '
    {%- for column, field in columns.items() %},
        case when starts_with({{ column }}, '␛') and regexp_matches({{ column }}, '\\u[dD][89a-fA-F][0-9a-fA-F]{2}')
            then '{{ field }}' end
    {%- endfor %}
    ), '')
{%- endmacro %}
