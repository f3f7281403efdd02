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
    {%- set split_value -%}
        case
            when {{ field_name }} = 'countries' then {{ value }}
            else replace({{ value }}, ', ', chr(31))
        end
    {%- endset -%}
    {{ list_transform_filter(
        split_to_list(split_value, "','"),
        'piece',
        "replace(" ~ trim_spaces('piece') ~ ", chr(31), ', ')",
        "piece <> ''"
    ) }}
{%- endmacro %}


{% macro list_piece_is_suffix(piece) -%}
    {#- A piece that continues the previous entry: a company's legal form written after a comma
        without a space ("Livzon ... Co.,Ltd."). -#}
    {%- set legal_form -%}
        ^(ltd|limited|inc|llc|co|corp|corporation|plc|pvt|pte|gmbh|ag|kg|kft|s\.?\s?a|s\.?p\.?a|s\.?\s?l|s\.?r\.?l|s\.?r\.?o|b\.?v|n\.?v)\b
    {%- endset %}
    (
        length({{ piece }}) <= 20
        and {{ regex_matches(piece, regex_case_insensitive_prefix(legal_form)) }}
    )
{%- endmacro %}


{% macro fallback_key(ingredient_name_key, applicant_bizrno_key, manufacturer_key, permit_date_key) -%}
    {#- Identity when the number does not match: the four comparison keys joined by |, an
        unknown part empty. One definition for the records (stg_mfds__items) and the row
        versions they name (stg_mfds__item_versions), so both carry the same key. -#}
    concat_ws(
        '|',
        coalesce({{ ingredient_name_key }}, ''),
        coalesce({{ applicant_bizrno_key }}, ''),
        coalesce({{ manufacturer_key }}, ''),
        coalesce({{ permit_date_key }}, '')
    )
{%- endmacro %}


{% macro loose_key(ingredient_name_key, applicant_bizrno_key, permit_date_key) -%}
    {#- The fallback key without the manufacturer, null unless all three parts are known: an
        empty part would make the key too loose. -#}
    {{ ingredient_name_key }} || '|' || {{ applicant_bizrno_key }} || '|' || {{ permit_date_key }}
{%- endmacro %}


{% macro record_id(load_id, item_position) -%}
    {#- A record is its place in its load: the load and the position the API listed it at. -#}
    {{ load_id }} || ':' || cast({{ item_position }} as varchar)
{%- endmacro %}
