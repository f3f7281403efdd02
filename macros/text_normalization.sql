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


{% macro permit_no_placeholder(column) -%}
    {#- True when a registration number is a stand-in for "no number" ("-", "", "N/A", "없음",
        white space, punctuation alone): the models treat it as no number (null), as they treat
        a new registration that has none yet, so four records sent as "-" are four records
        without a number, never four records sharing one. -#}
    coalesce({{ comparison_key(column) }} in ({{ permit_no_placeholder_words() }}), true)
{%- endmacro %}


{% macro permit_no_placeholder_words() -%}
    {#- The comparison keys (case, width, punctuation and spaces folded away) of the words that
        mean "no number": N/A, NA, none, null, nil, 없음, 미정, 미부여, 해당없음. A key that is empty
        (punctuation or spaces alone, such as "-") is a placeholder too. -#}
    'na', 'none', 'null', 'nil', '없음', '미정', '미부여', '해당없음'
{%- endmacro %}


{% macro unreadable_text(columns) -%}
    {#- What makes a row version unreadable, field by field, in Korean for the integrity sheet
        (null when every field is readable text): a value the loader stored escaped (a U+241B
        marker and an ASCII JSON string) because it held bytes that are not UTF-8 (kept as
        surrogateescape, \udc80-\udcff), a lone surrogate, or a NUL. Such a record is quarantined
        (int_load_items_quarantined): shown escaped it would publish a mojibake CHANGED. -#}
    nullif(concat_ws(', '
    {%- for column, field in columns.items() %},
        case when starts_with({{ column }}, '␛') then '{{ field }}: ' || case
            when {{ regex_matches(column, '\\\\u[dD][cC][89a-fA-F][0-9a-fA-F]') }} then 'UTF-8 이 아닌 바이트(CP949 등)'
            when {{ regex_matches(column, '\\\\u[dD][89a-fA-F][0-9a-fA-F]{2}') }} then '짝 없는 서로게이트'
            when {{ regex_matches(column, '\\\\u0000') }} then 'NUL 문자'
            else '저장할 수 없는 글자'
        end end
    {%- endfor %}
    ), '')
{%- endmacro %}
