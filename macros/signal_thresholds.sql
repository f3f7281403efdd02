{#- The signal catalog's texts name thresholds by placeholder ({total_count_drop_ratio}) and are
    rendered here from the dbt vars, so a threshold has one home (dbt_project.yml or --vars) and
    the report never states a number the gates do not use. A *_ratio var reads as a percent
    (0.97 → 97%); any other var reads as its value. -#}

{% macro signal_threshold_vars() -%}
    {{ return([
        'total_count_drop_ratio', 'total_count_spike_ratio', 'all_changed_ratio',
        'withdrawn_share_ratio', 'identity_churn_ratio', 'field_fill_collapse_points',
        'event_burst_factor', 'event_burst_min', 'field_null_surge_points',
        'permit_parse_fail_ratio', 'slow_fetch_factor', 'http_retry_max', 'history_window_days',
        'field_change_ratio', 'field_change_min', 'quarantine_share_ratio', 'quarantine_min',
    ]) }}
{%- endmacro %}

{% macro threshold_text(name) -%}
    {%- set value = var(name) -%}
    {%- if name.endswith('_ratio') -%}
        {{ return('%g' | format(value * 100) ~ '%') }}
    {%- else -%}
        {{ return('%g' | format(value)) }}
    {%- endif -%}
{%- endmacro %}

{% macro render_thresholds(column) -%}
    {%- set names = signal_threshold_vars() -%}
    {%- for name in names %}replace({% endfor %}{{ column }}
    {%- for name in names %}, '{{ '{' ~ name ~ '}' }}', '{{ threshold_text(name) }}'){% endfor -%}
{%- endmacro %}

{% macro field_change_limit(previous_record_count) -%}
    greatest({{ var('field_change_min') }}, {{ var('field_change_ratio') }} * coalesce({{ previous_record_count }}, 0))
{%- endmacro %}


{% macro quarantine_limit(record_count) -%}
    greatest({{ var('quarantine_min') }}, {{ var('quarantine_share_ratio') }} * coalesce({{ record_count }}, 0))
{%- endmacro %}
