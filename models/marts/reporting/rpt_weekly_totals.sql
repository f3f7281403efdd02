-- One row per report date per metric: the 7 days before the report date (the week the
-- weekly report covers) against the 7 days before that and the trailing 30-day daily median.
-- Event metrics count accepted, non-baseline load days only: a rejected load publishes no events.

with daily_summary as (

    select * from {{ ref('dmf_daily_summary') }}

),

load_days as (

    select
        as_of_date,
        verdict,
        is_baseline,
        verdict = 'accepted' and not is_baseline as publishes_events,
        new_count,
        changed_count,
        withdrawn_count,
        event_count,
        critical_count,
        high_count,
        watchlist_hit_count,
        fired_signal_count
    from daily_summary

),

event_days as (

    -- the days whose events count: accepted loads past the baseline
    select * from load_days
    where publishes_events

),

metric_days as (

    select as_of_date, 1 as metric_order, 'new_count' as metric, new_count as metric_value, true as has_median
    from event_days
    union all
    select as_of_date, 2, 'changed_count', changed_count, true from event_days
    union all
    select as_of_date, 3, 'withdrawn_count', withdrawn_count, true from event_days
    union all
    select as_of_date, 4, 'event_count', event_count, true from event_days
    union all
    select as_of_date, 5, 'critical_count', critical_count, true from event_days
    union all
    select as_of_date, 6, 'high_count', high_count, true from event_days
    union all
    select as_of_date, 7, 'watchlist_hit_count', watchlist_hit_count, true from event_days
    union all
    select as_of_date, 8, 'fired_signal_count', fired_signal_count, true from load_days
    union all
    select as_of_date, 9, 'accepted_load_days', case when verdict = 'accepted' then 1 else 0 end, false from load_days
    union all
    select as_of_date, 10, 'rejected_load_days', case when verdict = 'rejected' then 1 else 0 end, false from load_days

),

metrics as (

    select distinct metric_order, metric, has_median from metric_days

),

report_dates as (

    -- every calendar day from the first load to a week after the last one, so a weekly
    -- report can be rendered for any Monday, including one that had no load itself
    select cast(report_day as date) as report_date
    from (
        select
            {{ date_spine_days('min(as_of_date) + 1', 'max(as_of_date) + 7') }} as report_day
        from load_days
    ) as spine

),

windowed as (

    select
        report_dates.report_date,
        metrics.metric_order,
        metrics.metric,
        metrics.has_median,
        coalesce(sum(case
            when metric_days.as_of_date between report_dates.report_date - 7 and report_dates.report_date - 1
                then metric_days.metric_value
        end), 0) as this_week,
        coalesce(sum(case
            when metric_days.as_of_date between report_dates.report_date - 14 and report_dates.report_date - 8
                then metric_days.metric_value
        end), 0) as previous_week,
        count(case
            when metric_days.as_of_date between report_dates.report_date - 7 and report_dates.report_date - 1
                then 1
        end) as this_week_days,
        count(case
            when metric_days.as_of_date between report_dates.report_date - 14 and report_dates.report_date - 8
                then 1
        end) as previous_week_days,
        {{ median('case
            when metric_days.as_of_date between report_dates.report_date - 30 and report_dates.report_date - 1
                then metric_days.metric_value
        end') }} as median_30d_daily,
        count(case
            when metric_days.as_of_date between report_dates.report_date - 30 and report_dates.report_date - 1
                then 1
        end) as median_30d_days
    from report_dates
    cross join metrics
    left join metric_days
        on metrics.metric = metric_days.metric
        and metric_days.as_of_date between report_dates.report_date - 30 and report_dates.report_date - 1
    group by 1, 2, 3, 4

),

final as (

    select
        report_date,
        report_date - 7 as period_start,
        report_date - 1 as period_end,
        metric_order,
        metric,
        this_week,
        -- A comparison week without a contributing day has no value: not 0, so that no
        -- growth "from zero" is shown.
        case when previous_week_days > 0 then previous_week end as previous_week,
        case
            when previous_week_days > 0 and this_week_days > 0 then this_week - previous_week
        end as week_over_week_change,
        this_week_days,
        previous_week_days,
        case
            when this_week_days > 0 then cast(this_week as {{ type_double() }}) / this_week_days
        end as this_week_daily_avg,
        case when has_median then median_30d_daily end as median_30d_daily,
        case when has_median then median_30d_days end as median_30d_days
    from windowed

)

select * from final
