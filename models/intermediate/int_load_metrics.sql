{#- One row per load of the sequence with every figure the integrity signals compare: the
    load's own counts, the previous load's, and the trailing history (30 days before the load,
    baseline excluded) for the burst and speed signals. -#}

with

loads as (

    select * from {{ ref('int_loads_sequenced') }}

),

item_metrics as (

    select * from {{ ref('int_load_item_metrics') }}

),

events as (

    select * from {{ ref('int_registration_events') }}

),

keyed as (

    select * from {{ ref('int_registrations_keyed') }}

),

event_counts as (

    select
        load_id,
        count(*) as event_count,
        count(*) filter (where event_type = 'NEW') as new_count,
        count(*) filter (where event_type = 'CHANGED') as changed_count,
        count(*) filter (where event_type = 'WITHDRAWN') as withdrawn_count

    from events
    group by load_id

),

identity_pairs as (

    {#- A registration that left and one that arrived under the same ingredient and applicant
        (comparison keys) look like one record whose identity broke: count the pairs. -#}
    select
        events.load_id,
        keyed.ingredient_name_key,
        keyed.applicant_key,
        least(
            count(*) filter (where events.event_type = 'WITHDRAWN'),
            count(*) filter (where events.event_type = 'NEW')
        ) as pairs

    from events
    inner join keyed
        on events.record_id = keyed.record_id
    where events.event_type in ('NEW', 'WITHDRAWN')
    group by events.load_id, keyed.ingredient_name_key, keyed.applicant_key

),

identity_churn as (

    select load_id, sum(pairs) as identity_churn_pairs
    from identity_pairs
    group by load_id

),

ambiguous as (

    select loads.load_id, count(*) as ambiguous_records
    from {{ ref('int_registration_links') }} as links
    inner join loads on links.load_seq = loads.load_seq
    where links.match_stage = 'ambiguous'
    group by loads.load_id

),

loose_links as (

    select loads.load_id, count(*) as loose_key_links
    from {{ ref('int_registration_links') }} as links
    inner join loads on links.load_seq = loads.load_seq
    where links.match_stage = 'loose_key'
    group by loads.load_id

),

combined as (

    select
        loads.*,
        coalesce(event_counts.event_count, 0) as event_count,
        coalesce(event_counts.new_count, 0) as new_count,
        coalesce(event_counts.changed_count, 0) as changed_count,
        coalesce(event_counts.withdrawn_count, 0) as withdrawn_count,
        item_metrics.record_count,
        item_metrics.permit_parse_failures,
        item_metrics.permit_date_failures,
        {%- for field in registration_fields() %}
        item_metrics.{{ field }}_null_pct,
        {%- endfor %}
        coalesce(item_metrics.duplicate_number_groups, 0) as duplicate_number_groups,
        coalesce(ambiguous.ambiguous_records, 0) as ambiguous_records,
        coalesce(identity_churn.identity_churn_pairs, 0) as identity_churn_pairs,
        coalesce(loose_links.loose_key_links, 0) as loose_key_links

    from loads
    left join event_counts on loads.load_id = event_counts.load_id
    left join item_metrics on loads.load_id = item_metrics.load_id
    left join ambiguous on loads.load_id = ambiguous.load_id
    left join identity_churn on loads.load_id = identity_churn.load_id
    left join loose_links on loads.load_id = loose_links.load_id

),

{%- set trailing = "order by as_of_date range between interval '" ~ var('history_window_days')
    ~ " days' preceding and interval '1 days' preceding" %}

with_history as (

    select
        *,
        lag(total_count) over (order by load_seq) as previous_total_count,
        lag(record_count) over (order by load_seq) as previous_record_count,
        lag(duplicate_number_groups) over (order by load_seq) as previous_duplicate_number_groups,
        {%- for field in registration_fields() %}
        lag({{ field }}_null_pct) over (order by load_seq) as previous_{{ field }}_null_pct,
        {%- endfor %}
        count(case when not is_baseline then 1 end) over ({{ trailing }}) as history_loads,
        {{ trailing_days_median(
            'case when not is_baseline then event_count end', 'combined', 'as_of_date', var('history_window_days')
        ) }}
            as event_count_median,
        max(case when not is_baseline then withdrawn_count end) over ({{ trailing }}) as withdrawn_count_max,
        {{ trailing_days_median('duration_s', 'combined', 'as_of_date', var('history_window_days')) }}
            as duration_median

    from combined

)

select * from with_history
