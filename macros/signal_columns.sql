{#- The columns a signal row has wherever it is kept: computed (int_load_signals), recorded for
    a rejected load (mfds_raw.rejected_load_signals, stg_mfds__rejected_load_signals) and
    published (dmf_signals). One list, so the copies cannot drift apart; the raw table's DDL
    takes the types from here too. -#}

{% macro signal_columns() -%}
    {{ return([
        ('load_id', 'varchar'),
        ('as_of_date', 'date'),
        ('signal_id', 'varchar'),
        ('is_gate', 'boolean'),
        ('fired', 'boolean'),
        ('severity', 'varchar'),
        ('observed', type_double()),
        ('baseline', type_double()),
        ('baseline_text', 'varchar'),
        ('window_text', 'varchar'),
        ('context', 'varchar'),
        ('description', 'varchar'),
    ]) }}
{%- endmacro %}

{#- The signal columns as a select list, each followed by a comma (the caller adds its own
    last column), one per line at the models' 8-space indent. -#}
{% macro signal_column_list() -%}
    {%- for name, type in signal_columns() %}
        {{ name }},
    {%- endfor %}
{%- endmacro %}
