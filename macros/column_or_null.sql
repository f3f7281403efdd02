{#- A column of a relation when it has it, else a typed null: lets a model read a column the
    loader added later (e.g. load_runs.schema_drift) from a warehouse whose raw table predates
    it, until the first new load adds it. -#}

{% macro column_or_null(relation, column_name, data_type='varchar') -%}
    {%- set present = [] -%}
    {%- if execute -%}
        {%- for column in adapter.get_columns_in_relation(relation) -%}
            {%- if column.name | lower == column_name | lower -%}
                {%- do present.append(column.name) -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
    {%- if present -%}
        {{ column_name }}
    {%- else -%}
        cast(null as {{ data_type }}) as {{ column_name }}
    {%- endif -%}
{%- endmacro %}
