{#- Integrity signals: whether a field changed shape: fill rates, empty values, records changed per
    field, registration numbers and dates in no known format. One branch per signal, load, day and
    signal on the first line, then observed, baseline, fired and the baseline's text;
    int_load_signals unions the families. -#}

with

metrics as (

    select * from {{ ref('int_load_metrics') }}

),

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

observations as (

    select
        metrics.load_id, metrics.as_of_date, 'field_fill_collapse' as signal_id,
        cast({{ round_double('fill_drops.worst_fill_pct', 2) }} as {{ type_double() }}) as observed,
        cast({{ round_double('fill_drops.worst_previous_fill_pct', 2) }} as {{ type_double() }}) as baseline,
        coalesce(fill_drops.worst_drop_points > {{ var('field_fill_collapse_points') }}, false) as fired,
        (
            coalesce(fill_drops.worst_field, '-') || ' 항목의 채움률(값이 있는 비율)이 마지막 반영 적재보다 '
            || {{ var('field_fill_collapse_points') }} || '%p 넘게 떨어지면 거부'
            || coalesce('; 급락: ' || fill_drops.collapsed_fields, '')
        ) as baseline_text
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

)

select * from observations
