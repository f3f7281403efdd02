{#- A text column analysts type into: no value with spaces before or after it (nor one of spaces
    only). dbt loads a seed cell as it is, so 'ibuprofen ' matches nothing and '   ' passes
    not_null; `dmf seeds check` reads this test from seeds/_seeds.yml and names the cell. -#}

{% test trimmed(model, column_name) %}

select {{ column_name }} as untrimmed_value
from {{ model }}
where {{ column_name }} <> {{ dmf_watch.trim_spaces(column_name) }}

{% endtest %}
