{#- Integrity signals: how the fetch itself went, its duration and its HTTP retries. One branch per
    signal, load, day and signal on the first line, then observed, baseline, fired and the
    baseline's text; int_load_signals unions the families. -#}

with

metrics as (

    select * from {{ ref('int_load_metrics') }}

),

{%- set min_history = var('signal_min_history') %}

observations as (

    select
        load_id, as_of_date, 'slow_fetch' as signal_id,
        cast(duration_s as {{ type_double() }}) as observed,
        cast(duration_median as {{ type_double() }}) as baseline,
        (
            history_loads >= {{ min_history }}
            and duration_s > {{ var('slow_fetch_factor') }} * duration_median
        ) as fired,
        (
            '최근 {{ var('history_window_days') }}일 수집 시간 중앙값 '
            || coalesce({{ double_text(round_double('duration_median', 1)) }}, '-') || '초'
        ) as baseline_text
    from metrics

    union all

    select
        load_id, as_of_date, 'http_retry_surge',
        cast(retries as {{ type_double() }}), {{ var('http_retry_max') }},
        retries > {{ var('http_retry_max') }},
        '재시도 ' || {{ var('http_retry_max') }} || '회 이하가 정상'
    from metrics

)

select * from observations
