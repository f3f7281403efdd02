{% macro ingredient_base_name(key_column) -%}
    {#- Strips the salt/hydrate/micronized/isomer words of seed ingredient_salt_words from a
        comparison key: suffix words repeatedly from the end (아토르바스타틴칼슘삼수화물 →
        아토르바스타틴), prefix words once from the start (미분화…, s…). -#}
    regexp_replace(
        regexp_replace(
            {{ key_column }},
            (select '(' || string_agg({{ comparison_key('word') }}, '|' order by length(word) desc) || ')+$'
             from {{ ref('ingredient_salt_words') }} where position = 'suffix'),
            ''
        ),
        (select '^(' || string_agg({{ comparison_key('word') }}, '|' order by length(word) desc) || ')'
         from {{ ref('ingredient_salt_words') }} where position = 'prefix'),
        ''
    )
{%- endmacro %}


{% macro name_similarity(left, right) -%}
    {#- How alike two base names are, to rank candidates: Jaro-Winkler on every engine. -#}
    {{ jaro_winkler(left, right) }}
{%- endmacro %}
