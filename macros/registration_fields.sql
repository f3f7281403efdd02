{% macro registration_fields() -%}
    {#- The compared fields, with the names used everywhere (events, rules, report; SPEC §4). -#}
    {{ return([
        'permit_no', 'ingredient_name', 'applicant', 'applicant_bizrno', 'manufacturer',
        'manufacture_place', 'countries', 'permit_date', 'notice_code'
    ]) }}
{%- endmacro %}


{% macro list_fields() -%}
    {#- The fields that hold several entries joined by commas. -#}
    {{ return(['manufacturer', 'manufacture_place', 'countries']) }}
{%- endmacro %}


{% macro list_pieces(value, field_name) -%}
    {#- The comma-separated pieces of a list value (manufacturers, sites, countries), in order.
        In a manufacturer or a site, a comma followed by a space is inside a name or an address
        ("Co., Ltd.", "Plot 12, Hyderabad"), never between entries, so it does not split;
        countries (displayed as a sorted ", "-joined list) never hold a comma and always split.
        Empty pieces (trailing commas) are dropped. "Co.,Ltd." still splits here:
        list_piece_is_suffix glues it back. -#}
    list_filter(
        list_transform(
            string_split(
                case
                    when {{ field_name }} = 'countries' then {{ value }}
                    else replace({{ value }}, ', ', chr(31))
                end,
                ','
            ),
            lambda piece: replace(trim(piece), chr(31), ', ')
        ),
        lambda piece: piece <> ''
    )
{%- endmacro %}


{% macro list_piece_is_suffix(piece) -%}
    {#- A piece that continues the previous entry: a company's legal form written after a comma
        without a space ("Livzon ... Co.,Ltd."). -#}
    (
        length({{ piece }}) <= 20
        and regexp_matches(
            {{ piece }},
            '^(?i)(ltd|limited|inc|llc|co|corp|corporation|plc|pvt|pte|gmbh|ag|kg|kft|s\.?\s?a|s\.?p\.?a|s\.?\s?l|s\.?r\.?l|s\.?r\.?o|b\.?v|n\.?v)\b'
        )
    )
{%- endmacro %}
