-- One row per report date per registration group (the "<serial>-<letter>" segment of a
-- registration number such as 20190801-209-J-399 → 209-J) with events in the 7-day window.

with periods as (

    select distinct report_date, period_start, period_end from {{ ref('rpt_weekly_totals') }}

),

grouped_events as (

    select
        as_of_date,
        event_type,
        coalesce(
            nullif({{ regex_extract("coalesce(permit_no, '')", '^[0-9]{8}-([0-9]+-[A-Z]+)', 1) }}, ''),
            case when permit_no is null or {{ trim_spaces('permit_no') }} = '' then '(번호 없음)' else '(기타 형식)' end
        ) as registration_group
    from {{ ref('dmf_events') }}

),

counted as (

    select
        periods.report_date,
        grouped_events.registration_group,
        count(*) as event_count,
        count(case when grouped_events.event_type = 'NEW' then 1 end) as new_count,
        count(case when grouped_events.event_type = 'CHANGED' then 1 end) as changed_count,
        count(case when grouped_events.event_type = 'WITHDRAWN' then 1 end) as withdrawn_count
    from periods
    inner join grouped_events
        on grouped_events.as_of_date between periods.period_start and periods.period_end
    group by 1, 2

),

final as (

    select
        report_date,
        row_number() over (
            partition by report_date order by event_count desc, {{ bytewise('registration_group') }} asc
        ) as group_rank,
        registration_group,
        event_count,
        new_count,
        changed_count,
        withdrawn_count
    from counted

)

select * from final
