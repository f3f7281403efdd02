{#- Integrity signals: the records a load held out of the diff: text that is not UTF-8, the records
    quarantined and their share of the list. One branch per signal, load, day and signal on the
    first line, then observed, baseline, fired and the baseline's text; int_load_signals unions the
    families. -#}

with

metrics as (

    select * from {{ ref('int_load_metrics') }}

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

    select
        metrics.load_id, metrics.as_of_date, 'undecodable_text' as signal_id,
        cast(coalesce(undecodable_records.records, 0) as {{ type_double() }}) as observed,
        cast(0 as {{ type_double() }}) as baseline,
        undecodable_records.records is not null as fired,
        (
            'UTF-8 이 아닌 글자가 든 기록 수 (원시 적재에 받은 그대로 보관)'
            || coalesce('; 항목: ' || undecodable_records.field_names, '')
        ) as baseline_text
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

)

select * from observations
