{% macro registration_fields() -%}
    {#- The compared fields, with the names used everywhere (events, rules, report; SPEC §4). -#}
    {{ return([
        'permit_no', 'ingredient_name', 'applicant', 'applicant_bizrno', 'manufacturer',
        'manufacture_place', 'countries', 'permit_date', 'notice_code'
    ]) }}
{%- endmacro %}


{% macro list_change_detail(before, after) -%}
    {#- For comma-joined list values (manufacturers, countries): were items only added, only
        removed, or replaced? Company names may hold commas themselves; both sides split alike,
        so the set comparison still holds. -#}
    case
        when {{ before }} is null then 'added'
        when {{ after }} is null then 'removed'
        when list_has_all(
            list_transform(string_split({{ after }}, ','), lambda x: trim(x)),
            list_transform(string_split({{ before }}, ','), lambda x: trim(x))
        ) then 'added'
        when list_has_all(
            list_transform(string_split({{ before }}, ','), lambda x: trim(x)),
            list_transform(string_split({{ after }}, ','), lambda x: trim(x))
        ) then 'removed'
        else 'replaced'
    end
{%- endmacro %}
