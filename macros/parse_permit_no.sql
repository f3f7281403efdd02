{#- The registration-number generations seen in real MFDS data (data notes, sample STATS):
      five_part       20121228-168-I-169-04     date-group-class-sequence-subsequence
      four_part       20190801-211-J-399        date-group-class-sequence (2018 on)
      su_nd           수258-63-ND               수group-sequence-ND
      nd              0754-3-ND                 group-sequence-ND
      empty_segments  20261007---12264-104      date---sequence-subsequence
    each optionally followed by a derivation suffix `(1)`, `(A)` or `(1)-A`. -#}

{% macro permit_no_suffix_pattern() -%}(\([0-9A-Z]+\)(-[A-Z])?)?{%- endmacro %}

{% macro permit_no_patterns() -%}
    {%- set suffix = permit_no_suffix_pattern() -%}
    {{ return({
        "five_part": "^([0-9]{8})-([0-9]+)-([A-Z])-([0-9]+)-([0-9]+)" ~ suffix ~ "$",
        "four_part": "^([0-9]{8})-([0-9]+)-([A-Z])-([0-9]+)" ~ suffix ~ "$",
        "su_nd": "^수([0-9]+)-([0-9]+)-ND" ~ suffix ~ "$",
        "nd": "^([0-9]+)-([0-9]+)-ND" ~ suffix ~ "$",
        "empty_segments": "^([0-9]{8})---([0-9]+)-([0-9]+)" ~ suffix ~ "$",
    }) }}
{%- endmacro %}


{% macro parse_permit_no(column) -%}
    {#- Select expressions for the parts of a normalized registration number (see the table
        above); `permit_parse_status` names the format, `missing` or `unparsed`. -#}
    {%- set p = permit_no_patterns() -%}
    case
        when {{ column }} is null then 'missing'
        {%- for name, pattern in p.items() %}
        when {{ regex_matches(column, pattern) }} then '{{ name }}'
        {%- endfor %}
        else 'unparsed'
    end as permit_parse_status,
    case
        when {{ regex_matches(column, p.five_part) }} then {{ regex_extract(column, p.five_part, 1) }}
        when {{ regex_matches(column, p.four_part) }} then {{ regex_extract(column, p.four_part, 1) }}
        when {{ regex_matches(column, p.empty_segments) }} then {{ regex_extract(column, p.empty_segments, 1) }}
    end as permit_date_prefix,
    case
        when {{ regex_matches(column, p.five_part) }} then {{ regex_extract(column, p.five_part, 2) }}
        when {{ regex_matches(column, p.four_part) }} then {{ regex_extract(column, p.four_part, 2) }}
        when {{ regex_matches(column, p.su_nd) }} then '수' || {{ regex_extract(column, p.su_nd, 1) }}
        when {{ regex_matches(column, p.nd) }} then {{ regex_extract(column, p.nd, 1) }}
    end as permit_group,
    case
        when {{ regex_matches(column, p.five_part) }} then {{ regex_extract(column, p.five_part, 3) }}
        when {{ regex_matches(column, p.four_part) }} then {{ regex_extract(column, p.four_part, 3) }}
        when {{ regex_matches(column, p.su_nd) }} or {{ regex_matches(column, p.nd) }} then 'ND'
    end as permit_class,
    case
        when {{ regex_matches(column, p.five_part) }} then {{ regex_extract(column, p.five_part, 4) }}
        when {{ regex_matches(column, p.four_part) }} then {{ regex_extract(column, p.four_part, 4) }}
        when {{ regex_matches(column, p.su_nd) }} then {{ regex_extract(column, p.su_nd, 2) }}
        when {{ regex_matches(column, p.nd) }} then {{ regex_extract(column, p.nd, 2) }}
        when {{ regex_matches(column, p.empty_segments) }} then {{ regex_extract(column, p.empty_segments, 2) }}
    end as permit_sequence,
    case
        when {{ regex_matches(column, p.five_part) }} then {{ regex_extract(column, p.five_part, 5) }}
        when {{ regex_matches(column, p.empty_segments) }} then {{ regex_extract(column, p.empty_segments, 3) }}
    end as permit_subsequence,
    nullif({{ regex_extract(column, permit_no_suffix_pattern() ~ '$', 0) }}, '') as permit_derivation
{%- endmacro %}
