-- One row per report date per ingredient that had events in the 7-day window and has at most
-- one registered manufacturer in the current registry (0 means its last one left the list):
-- for a company relying on it there is no alternative supplier.

with periods as (

    select distinct report_date, period_start, period_end from {{ ref('rpt_weekly_totals') }}

),

registry_sources as (

    select
        ingredient_name,
        count(*) as registration_count,
        count(distinct manufacturer) as manufacturer_count,
        min({{ bytewise('manufacturer') }}) as manufacturer
    from {{ ref('dmf_registrations') }}
    where ingredient_name is not null
    group by 1

),

week_events as (

    select
        periods.report_date,
        events.ingredient_name,
        count(*) as event_count,
        count(case when events.event_type = 'NEW' then 1 end) as new_count,
        count(case when events.event_type = 'CHANGED' then 1 end) as changed_count,
        count(case when events.event_type = 'WITHDRAWN' then 1 end) as withdrawn_count,
        min(events.severity_rank) as top_severity_rank,
        max(events.as_of_date) as last_event_date,
        max(case when events.on_watchlist then 1 else 0 end) = 1 as on_watchlist
    from periods
    inner join {{ ref('dmf_events') }} as events
        on events.as_of_date between periods.period_start and periods.period_end
    where events.ingredient_name is not null
    group by 1, 2

),

final as (

    select
        week_events.report_date,
        week_events.ingredient_name,
        coalesce(registry_sources.manufacturer_count, 0) as manufacturer_count,
        coalesce(registry_sources.registration_count, 0) as registration_count,
        registry_sources.manufacturer,
        week_events.event_count,
        week_events.new_count,
        week_events.changed_count,
        week_events.withdrawn_count,
        week_events.top_severity_rank,
        case week_events.top_severity_rank
            when 1 then 'CRITICAL' when 2 then 'HIGH' when 3 then 'MEDIUM' when 4 then 'INFO' else 'COSMETIC'
        end as top_severity,
        week_events.last_event_date,
        week_events.on_watchlist
    from week_events
    left join registry_sources
        on week_events.ingredient_name = registry_sources.ingredient_name
    where coalesce(registry_sources.manufacturer_count, 0) <= 1

)

select * from final
