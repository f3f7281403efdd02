{#- The figures of each day's dashboard, from the load that decides the day (dmf_day_decisions): its verdict and
    registry size, and the published events counted by type, severity and watchlist. -#}

with

day_decisions as (

    select * from {{ ref('dmf_day_decisions') }}

),

loads as (

    select * from {{ ref('dmf_loads') }}

),

day_loads as (

    select loads.*
    from day_decisions
    inner join loads
        on day_decisions.load_id = loads.load_id

),

events as (

    select * from {{ ref('dmf_events') }}

),

event_counts as (

    select
        load_id,
        count(*) as event_count,
        count(*) filter (where event_type = 'NEW') as new_count,
        count(*) filter (where event_type = 'CHANGED') as changed_count,
        count(*) filter (where event_type = 'WITHDRAWN') as withdrawn_count,
        {%- for severity in severities() %}
        count(*) filter (where severity = '{{ severity }}') as {{ severity | lower }}_count,
        {%- endfor %}
        count(*) filter (where on_watchlist) as watchlist_hit_count

    from events
    group by load_id

),

registry_sizes as (

    select load_id, count(*) as registry_count
    from {{ ref('int_registrations_keyed') }}
    group by load_id

),

signal_counts as (

    select
        load_id,
        count(*) filter (where fired) as fired_signal_count,
        count(*) filter (where fired and is_gate) as fired_gate_count

    from {{ ref('dmf_signals') }}
    group by load_id

),

summary as (

    select
        day_loads.as_of_date,
        day_loads.load_id,
        day_loads.verdict,
        day_loads.reason,
        day_loads.is_baseline,
        day_loads.total_count,
        registry_sizes.registry_count,
        {%- for column in ['event_count', 'new_count', 'changed_count', 'withdrawn_count'] %}
        coalesce(event_counts.{{ column }}, 0) as {{ column }},
        {%- endfor %}
        {%- for severity in severities() %}
        coalesce(event_counts.{{ severity | lower }}_count, 0) as {{ severity | lower }}_count,
        {%- endfor %}
        coalesce(event_counts.watchlist_hit_count, 0) as watchlist_hit_count,
        coalesce(signal_counts.fired_signal_count, 0) as fired_signal_count,
        coalesce(signal_counts.fired_gate_count, 0) as fired_gate_count

    from day_loads
    left join event_counts
        on day_loads.load_id = event_counts.load_id
    left join registry_sizes
        on day_loads.load_id = registry_sizes.load_id
    left join signal_counts
        on day_loads.load_id = signal_counts.load_id

)

select * from summary
