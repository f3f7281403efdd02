{#- Integrity signals: how many records came, went and changed, against the last accepted load and
    the trailing window. One branch per signal, load, day and signal on the first line, then
    observed, baseline, fired and the baseline's text; int_load_signals unions the families. -#}

with

metrics as (

    select * from {{ ref('int_load_metrics') }}

),

{%- set min_history = var('signal_min_history') %}

observations as (

    select
        load_id, as_of_date, 'total_count_drop' as signal_id,
        cast(total_count as {{ type_double() }}) as observed,
        cast(previous_total_count as {{ type_double() }}) as baseline,
        (
            previous_total_count is not null
            and total_count < {{ var('total_count_drop_ratio') }} * previous_total_count
        ) as fired,
        (
            '마지막 반영 적재의 API 총건수 ' || coalesce(cast(previous_total_count as varchar), '-')
            || ', 그 ' || cast(100 * {{ var('total_count_drop_ratio') }} as varchar) || '% 미만이면 거부'
        ) as baseline_text
    from metrics

    union all

    select
        load_id, as_of_date, 'zero_records',
        cast(record_count as {{ type_double() }}), null,
        coalesce(record_count, 0) = 0,
        '적재에는 기록이 있어야 함'
    from metrics

    union all

    select
        load_id, as_of_date, 'total_count_spike',
        cast(total_count as {{ type_double() }}), cast(previous_total_count as {{ type_double() }}),
        (
            previous_total_count is not null
            and total_count > {{ var('total_count_spike_ratio') }} * previous_total_count
        ),
        '마지막 반영 적재의 API 총건수 ' || coalesce(cast(previous_total_count as varchar), '-')
    from metrics

    union all

    select
        load_id, as_of_date, 'all_changed',
        {{ round_double(divide('changed_count', 'nullif(previous_record_count, 0)'), 4) }},
        {{ var('all_changed_ratio') }},
        (
            previous_record_count is not null
            and changed_count > {{ var('all_changed_ratio') }} * previous_record_count
        ),
        (
            '등록 ' || coalesce(cast(previous_record_count as varchar), '-') || '건 중 ' || changed_count
            || '건 변경, ' || cast(100 * {{ var('all_changed_ratio') }} as varchar) || '% 초과면 거부'
        )
    from metrics

    union all

    select
        load_id, as_of_date, 'withdrawn_share',
        {{ round_double(divide('withdrawn_count', 'nullif(previous_record_count, 0)'), 4) }},
        {{ var('withdrawn_share_ratio') }},
        (
            previous_record_count is not null
            and withdrawn_count > {{ var('withdrawn_share_ratio') }} * previous_record_count
        ),
        (
            '마지막 반영 적재 등록 ' || coalesce(cast(previous_record_count as varchar), '-') || '건 중 '
            || withdrawn_count || '건 취하, '
            || cast(100 * {{ var('withdrawn_share_ratio') }} as varchar) || '% 초과면 거부'
        )
    from metrics

    union all

    select
        load_id, as_of_date, 'event_burst',
        cast(event_count as {{ type_double() }}), event_count_median,
        (
            history_loads >= {{ min_history }}
            and event_count >= {{ var('event_burst_min') }}
            and event_count > {{ var('event_burst_factor') }} * event_count_median
        ),
        (
            '최근 {{ var('history_window_days') }}일 중앙값 ' || coalesce({{ double_text('event_count_median') }}, '-')
            || ' (적재 ' || history_loads || '회 기준)'
        )
    from metrics

    union all

    select
        load_id, as_of_date, 'withdrawn_burst',
        cast(withdrawn_count as {{ type_double() }}), cast(withdrawn_count_max as {{ type_double() }}),
        history_loads >= {{ min_history }} and withdrawn_count > withdrawn_count_max,
        (
            '최근 {{ var('history_window_days') }}일 최댓값 ' || coalesce(cast(withdrawn_count_max as varchar), '-')
            || ' (적재 ' || history_loads || '회 기준)'
        )
    from metrics

    union all

    select
        load_id, as_of_date, 'duplicate_surge',
        cast(duplicate_number_groups as {{ type_double() }}),
        cast(previous_duplicate_number_groups as {{ type_double() }}),
        (
            previous_duplicate_number_groups is not null
            and duplicate_number_groups > 0
            and duplicate_number_groups > 2 * previous_duplicate_number_groups
        ),
        '이전 적재의 중복 등록번호 수: ' || coalesce(cast(previous_duplicate_number_groups as varchar), '-')
    from metrics

)

select * from observations
