{#- Integrity signals: how surely today's records were matched with the last accepted load's. One
    branch per signal, load, day and signal on the first line, then observed, baseline, fired and
    the baseline's text; int_load_signals unions the families. -#}

with

metrics as (

    select * from {{ ref('int_load_metrics') }}

),

observations as (

    select
        load_id, as_of_date, 'identity_churn' as signal_id,
        cast(
            {{ round_double(divide('identity_churn_pairs', 'nullif(previous_record_count, 0)'), 4) }}
            as {{ type_double() }}
        ) as observed,
        cast({{ var('identity_churn_ratio') }} as {{ type_double() }}) as baseline,
        (
            previous_record_count is not null
            and identity_churn_pairs > {{ var('identity_churn_ratio') }} * previous_record_count
        ) as fired,
        (
            '등록 ' || coalesce(cast(previous_record_count as varchar), '-') || '건 중 같은 성분·신청인의 취하·신규 쌍 '
            || identity_churn_pairs || '건, '
            || cast(100 * {{ var('identity_churn_ratio') }} as varchar) || '% 초과면 거부'
        ) as baseline_text
    from metrics

    union all

    select
        load_id, as_of_date, 'identity_ambiguous',
        cast(ambiguous_records as {{ type_double() }}), 0,
        ambiguous_records > 0,
        '대체 키가 겹쳐 어제 기록과 맞추지 않은 기록 수'
    from metrics

    union all

    select
        load_id, as_of_date, 'identity_loose_key',
        cast(loose_key_links as {{ type_double() }}), 0,
        loose_key_links > 0,
        '성분·사업자등록번호·등록일자만으로 전일 기록과 이은 기록 수'
    from metrics

)

select * from observations
