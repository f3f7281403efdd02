{% macro registration_fields() -%}
    {#- The compared fields, with the names used everywhere (events, rules, report; SPEC §4). -#}
    {{ return([
        'permit_no', 'ingredient_name', 'applicant', 'applicant_bizrno', 'manufacturer',
        'manufacture_place', 'countries', 'permit_date', 'notice_code'
    ]) }}
{%- endmacro %}


{% macro list_change_detail(before, after) -%}
    {#- For comma-joined list values (manufacturers, countries): were items only added, only
        removed, or replaced? Entries may repeat (two sites in one country) and company names may
        hold commas themselves; both sides split alike, so the comparison still holds. -#}
    {%- set before_list = "list_transform(string_split(" ~ before ~ ", ','), lambda x: trim(x))" -%}
    {%- set after_list = "list_transform(string_split(" ~ after ~ ", ','), lambda x: trim(x))" -%}
    case
        when {{ before }} is null then 'added'
        when {{ after }} is null then 'removed'
        when list_has_all({{ after_list }}, {{ before_list }}) and len({{ after_list }}) > len({{ before_list }}) then 'added'
        when list_has_all({{ before_list }}, {{ after_list }}) and len({{ before_list }}) > len({{ after_list }}) then 'removed'
        else 'replaced'
    end
{%- endmacro %}
