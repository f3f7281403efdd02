{% macro display_text(column) -%}
    {#- The value a person reads and the pipeline compares: NFC, CR/LF removed, runs of white
        space collapsed, trimmed; empty becomes null. Whitespace alone is never a change (SPEC §4). -#}
    nullif({{ trim_spaces("regexp_replace(replace(replace(" ~ nfc(column) ~ ", chr(13), ''), chr(10), ''), '" ~ regex_space() ~ "+', ' ', 'g')") }}, '')
{%- endmacro %}


{% macro comparison_key(column) -%}
    {#- Two values with the same key differ only cosmetically: full/half width, Roman numerals,
        case, brackets, punctuation and spacing are folded away. -#}
    nullif(
        regexp_replace(
            {{ text_lower(fold_width(nfc(column))) }},
            '{{ regex_punctuation_symbol_space_class() }}', '', 'g'
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
    nullif({{ text_upper("regexp_replace(" ~ fold_width(nfc(column)) ~ ", '" ~ regex_space() ~ "+', '', 'g')") }}, '')
{%- endmacro %}


{% macro undecodable_fields(columns) -%}
    {#- The fields (given as raw column: field name) whose text arrived as bytes that are not
        UTF-8, or as lone surrogates: the loader stores them escaped (a U+241B marker and an
        ASCII JSON string whose \udc80-\udcff escapes are the bytes), never replaced. Null when
        every field is readable text. -#}
    nullif(concat_ws(', '
    {%- for column, field in columns.items() %},
        case when starts_with({{ column }}, '␛') and {{ regex_matches(column, '\\\\u[dD][89a-fA-F][0-9a-fA-F]{2}') }}
            then '{{ field }}' end
    {%- endfor %}
    ), '')
{%- endmacro %}
