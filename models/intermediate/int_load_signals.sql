{#- The integrity signals of SPEC §5, one row per signal per load of the sequence. SQL alone
    decides them; gates (is_gate in seed signal_catalog) are enforced by the test
    assert_no_integrity_gate_fired, which stops every model that publishes events, except for a
    load a person accepted after its gate fired (accepted_by_person: signals still shown). -#}

with

metrics as (

    select * from {{ ref('int_load_metrics') }}

),

context as (

    select * from {{ ref('int_load_event_context') }}

),

catalog as (

    select * from {{ ref('int_signal_catalog_rendered') }}

),

{%- set min_history = var('signal_min_history') %}

fill_rates as (

    {#- Each field's fill rate (non-null share, in percent) today and on the previous load, and
        the field's place in registration_fields(): of fields that dropped equally, the first
        is named (the order DuckDB's max_by met them in; it promises none). -#}
    {%- for field in registration_fields() %}
    select
        load_id,
        '{{ field }}' as field_name,
        {{ loop.index }} as field_order,
        100 - {{ field }}_null_pct as fill_pct,
        100 - previous_{{ field }}_null_pct as previous_fill_pct
    from metrics
    {% if not loop.last %}
    union all
    {% endif %}
    {%- endfor %}

),

fill_drops as (

    select
        load_id,
        {{ arg_max('field_name', 'previous_fill_pct - fill_pct', 'field_order') }} as worst_field,
        {{ arg_max('fill_pct', 'previous_fill_pct - fill_pct', 'field_order') }} as worst_fill_pct,
        {{ arg_max('previous_fill_pct', 'previous_fill_pct - fill_pct', 'field_order') }}
            as worst_previous_fill_pct,
        max(previous_fill_pct - fill_pct) as worst_drop_points,
        string_agg(
            case
                when previous_fill_pct - fill_pct > {{ var('field_fill_collapse_points') }}
                    then field_name || ' ' || {{ double_text(round_double('previous_fill_pct', 1)) }} || '% → '
                        || {{ double_text(round_double('fill_pct', 1)) }} || '%'
            end,
            ', ' order by {{ bytewise('field_name') }}
        ) as collapsed_fields

    from fill_rates
    group by load_id

),

field_change_counts as (

    {#- Records whose field changed, per load and field: a real day changes a field on a handful of
        records, a format change at the source (or a normalization regression) on hundreds. -#}
    select load_id, field_name, count(distinct dmf_key) as changed_records
    from {{ ref('int_field_changes') }}
    group by load_id, field_name

),

field_change_peaks as (

    select
        counts.load_id,
        max(counts.changed_records) as worst_changed_records,
        -- ties broken by name: the text must be the same on every build (incremental = full)
        min({{ bytewise('counts.field_name') }}) filter (where counts.changed_records = counts.peak) as worst_field,
        string_agg(
            case
                when counts.changed_records > {{ field_change_limit('metrics.previous_record_count') }}
                    then counts.field_name || ' ' || counts.changed_records || '건'
            end,
            ', ' order by {{ bytewise('counts.field_name') }}
        ) as surged_fields

    from (
        select *, max(changed_records) over (partition by load_id) as peak
        from field_change_counts
    ) as counts
    inner join metrics
        on counts.load_id = metrics.load_id
    group by counts.load_id

),

undecodable_records as (

    {#- Records of each load with text that was not valid UTF-8, as received (they are
        quarantined: the diff reads their last good version). -#}
    select
        quarantined.load_id,
        count(*) as records,
        string_agg(
            distinct {{ bytewise('versions.undecodable_fields') }}, ', '
            order by {{ bytewise('versions.undecodable_fields') }}
        ) as field_names

    from {{ ref('int_load_items_quarantined') }} as quarantined
    inner join {{ ref('stg_mfds__item_versions') }} as versions
        on quarantined.received_row_hash = versions.row_hash
    where versions.undecodable_fields is not null
    group by quarantined.load_id

),

quarantined_records as (

    {#- The records each load held out of the diff (int_load_items_quarantined), listed for the
        integrity sheet and the alert: position, number, ingredient and what was wrong; the
        first 20 by position (a gate day may hold hundreds). -#}
    select
        load_id,
        count(*) as records,
        string_agg(
            case when listed_order <= 20 then listing end, '; ' order by item_position
        ) as listing

    from (
        select
            load_id,
            item_position,
            row_number() over (partition by load_id order by item_position) as listed_order,
            '#' || cast(item_position + 1 as varchar) || ' '
            || coalesce(permit_no, '번호 없음')
            || coalesce(' ' || ingredient_name, '')
            || ' — ' || quarantine_detail as listing
        from {{ ref('int_load_items_quarantined') }}
    ) as listed
    group by load_id

),

observations as (

    -- one branch per signal: load, day and signal on the first line, then observed, baseline,
    -- fired and the baseline's text; an expression over several lines is bracketed so that it
    -- reads as one column
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
        load_id, as_of_date, 'identity_churn',
        {{ round_double(divide('identity_churn_pairs', 'nullif(previous_record_count, 0)'), 4) }},
        {{ var('identity_churn_ratio') }},
        (
            previous_record_count is not null
            and identity_churn_pairs > {{ var('identity_churn_ratio') }} * previous_record_count
        ),
        (
            '등록 ' || coalesce(cast(previous_record_count as varchar), '-') || '건 중 같은 성분·신청인의 취하·신규 쌍 '
            || identity_churn_pairs || '건, '
            || cast(100 * {{ var('identity_churn_ratio') }} as varchar) || '% 초과면 거부'
        )
    from metrics

    union all

    select
        metrics.load_id, metrics.as_of_date, 'field_fill_collapse',
        {{ round_double('fill_drops.worst_fill_pct', 2) }},
        {{ round_double('fill_drops.worst_previous_fill_pct', 2) }},
        coalesce(fill_drops.worst_drop_points > {{ var('field_fill_collapse_points') }}, false),
        (
            coalesce(fill_drops.worst_field, '-') || ' 항목의 채움률(값이 있는 비율)이 마지막 반영 적재보다 '
            || {{ var('field_fill_collapse_points') }} || '%p 넘게 떨어지면 거부'
            || coalesce('; 급락: ' || fill_drops.collapsed_fields, '')
        )
    from metrics
    left join fill_drops on metrics.load_id = fill_drops.load_id

    union all

    select
        metrics.load_id, metrics.as_of_date, 'field_change_surge',
        cast(coalesce(peaks.worst_changed_records, 0) as {{ type_double() }}),
        {{ field_change_limit('metrics.previous_record_count') }},
        peaks.surged_fields is not null,
        (
            '한 항목이 바뀐 등록이 ' || {{ var('field_change_min') }} || '건과 마지막 반영 적재 등록의 '
            || cast(100 * {{ var('field_change_ratio') }} as varchar) || '% 중 큰 쪽을 넘으면 거부'
            || coalesce('; 가장 많이 바뀐 항목: ' || peaks.worst_field || ' ' || peaks.worst_changed_records || '건', '')
            || coalesce('; 넘은 항목: ' || peaks.surged_fields, '')
        )
    from metrics
    left join field_change_peaks as peaks on metrics.load_id = peaks.load_id

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

    union all

    select
        load_id, as_of_date, 'field_null_surge',
        greatest(
            {%- for field in registration_fields() %}
            coalesce({{ field }}_null_pct - previous_{{ field }}_null_pct, 0){{ "," if not loop.last }}
            {%- endfor %}
        ),
        {{ var('field_null_surge_points') }},
        greatest(
            {%- for field in registration_fields() %}
            coalesce({{ field }}_null_pct - previous_{{ field }}_null_pct, 0){{ "," if not loop.last }}
            {%- endfor %}
        ) >= {{ var('field_null_surge_points') }},
        (
            '이전 적재 대비 빈 값 비율의 최대 증가(%p). 항목별 빈 값: '
            {%- for field in registration_fields() %}
            || '{{ field }} ' || coalesce({{ double_text(round_double('' ~ field ~ '_null_pct', 1)) }}, '-') || '%'
            {{- " || ', '" if not loop.last }}
            {%- endfor %}
        )
    from metrics

    union all

    select
        load_id, as_of_date, 'permit_parse_fail_surge',
        {{ round_double(divide('permit_parse_failures', 'nullif(record_count, 0)'), 4) }},
        {{ var('permit_parse_fail_ratio') }},
        permit_parse_failures > {{ var('permit_parse_fail_ratio') }} * record_count,
        '알려진 형식이 아닌 등록번호 ' || permit_parse_failures || '건'
    from metrics

    union all

    select
        load_id, as_of_date, 'date_format_drift',
        cast(permit_date_failures as {{ type_double() }}), 0,
        permit_date_failures > 0,
        '등록일자는 모두 YYYY-MM-DD 여야 함'
    from metrics

    union all

    select
        metrics.load_id, metrics.as_of_date, 'undecodable_text',
        cast(coalesce(undecodable_records.records, 0) as {{ type_double() }}), 0,
        undecodable_records.records is not null,
        (
            'UTF-8 이 아닌 글자가 든 기록 수 (원시 적재에 받은 그대로 보관)'
            || coalesce('; 항목: ' || undecodable_records.field_names, '')
        )
    from metrics
    left join undecodable_records on metrics.load_id = undecodable_records.load_id

    union all

    select
        metrics.load_id, metrics.as_of_date, 'records_quarantined',
        cast(coalesce(quarantined_records.records, 0) as {{ type_double() }}), 0,
        quarantined_records.records is not null,
        (
            '비교에서 뺀 기록 ' || cast(coalesce(quarantined_records.records, 0) as varchar) || '건'
            || coalesce(': ' || quarantined_records.listing, '')
        )
    from metrics
    left join quarantined_records on metrics.load_id = quarantined_records.load_id

    union all

    select
        metrics.load_id, metrics.as_of_date, 'quarantine_share',
        cast(coalesce(quarantined_records.records, 0) as {{ type_double() }}),
        cast({{ quarantine_limit('metrics.total_count') }} as {{ type_double() }}),
        coalesce(quarantined_records.records, 0) > {{ quarantine_limit('metrics.total_count') }},
        '격리 한도: {{ var('quarantine_min') }}건과 API 총건수의 {{ threshold_text('quarantine_share_ratio') }} 중 큰 값'
    from metrics
    left join quarantined_records on metrics.load_id = quarantined_records.load_id

    union all

    select
        load_id, as_of_date, 'slow_fetch',
        duration_s, duration_median,
        (
            history_loads >= {{ min_history }}
            and duration_s > {{ var('slow_fetch_factor') }} * duration_median
        ),
        (
            '최근 {{ var('history_window_days') }}일 수집 시간 중앙값 '
            || coalesce({{ double_text(round_double('duration_median', 1)) }}, '-') || '초'
        )
    from metrics

    union all

    select
        load_id, as_of_date, 'http_retry_surge',
        cast(retries as {{ type_double() }}), {{ var('http_retry_max') }},
        retries > {{ var('http_retry_max') }},
        '재시도 ' || {{ var('http_retry_max') }} || '회 이하가 정상'
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

),

windows as (

    select
        load_id,
        coalesce(cast(previous_as_of_date as varchar), '-') || ' → ' || cast(as_of_date as varchar) as previous_window,
        (
            cast({{ days_before('as_of_date', var('history_window_days')) }} as varchar)
            || ' ~ ' || cast({{ days_before('as_of_date', 1) }} as varchar)
        ) as trailing_window

    from metrics

),

signals as (

    select
        observations.load_id,
        observations.as_of_date,
        observations.signal_id,
        catalog.is_gate,
        coalesce(observations.fired, false) as fired,
        catalog.severity,
        observations.observed,
        observations.baseline,
        observations.baseline_text,
        case
            when observations.signal_id in ('event_burst', 'withdrawn_burst', 'slow_fetch') then windows.trailing_window
            else windows.previous_window
        end as window_text,
        cast(context.context as varchar) as context,
        catalog.description || '. ' || catalog.what_to_check as description,
        metrics.accepted_by_person

    from observations
    inner join catalog
        on observations.signal_id = catalog.signal_id
    left join context
        on observations.load_id = context.load_id
    inner join windows
        on observations.load_id = windows.load_id
    inner join metrics
        on observations.load_id = metrics.load_id

)

select * from signals
