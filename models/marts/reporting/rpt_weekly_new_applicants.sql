-- One row per report date per applicant that had NEW registrations in the report's 7-day window.

with periods as (

    select distinct report_date, period_start, period_end from {{ ref('rpt_weekly_totals') }}

),

new_events as (

    select
        as_of_date,
        dmf_key,
        ingredient_name,
        coalesce(nullif({{ trim_spaces('applicant') }}, ''), '(신청인 미기재)') as applicant
    from {{ ref('dmf_events') }}
    where event_type = 'NEW'

),

counted as (

    select
        periods.report_date,
        new_events.applicant,
        count(*) as new_count,
        count(distinct new_events.ingredient_name) as ingredient_count
    from periods
    inner join new_events
        on new_events.as_of_date between periods.period_start and periods.period_end
    group by 1, 2

),

final as (

    select
        report_date,
        row_number() over (
            partition by report_date order by new_count desc, {{ bytewise('applicant') }} asc
        ) as applicant_rank,
        applicant,
        new_count,
        ingredient_count
    from counted

)

select * from final
