-- One row per report date per manufacturing country named on NEW registrations in the
-- report's 7-day window; a registration naming a country twice ("스페인,스페인") counts once.

with periods as (

    select distinct report_date, period_start, period_end from {{ ref('rpt_weekly_totals') }}

),

new_event_countries as (

    select distinct
        as_of_date,
        dmf_key,
        coalesce(nullif({{ trim_spaces('country') }}, ''), '(국가 미기재)') as country
    from (
        select as_of_date, dmf_key, unnest({{ split_to_list("coalesce(countries, '')", "','") }}) as country
        from {{ ref('dmf_events') }}
        where event_type = 'NEW'
    ) as split_countries

),

counted as (

    select
        periods.report_date,
        new_event_countries.country,
        count(distinct new_event_countries.as_of_date || '|' || new_event_countries.dmf_key) as new_count
    from periods
    inner join new_event_countries
        on new_event_countries.as_of_date between periods.period_start and periods.period_end
    group by 1, 2

),

final as (

    select
        report_date,
        row_number() over (
            partition by report_date order by new_count desc, {{ bytewise('country') }} asc
        ) as country_rank,
        country,
        new_count
    from counted

)

select * from final
