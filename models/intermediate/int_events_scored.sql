{#- Every event with its severity, first match by priority: a CHANGED event takes the first
    rule matched by any of its field changes; NEW, REINSTATED and WITHDRAWN take the first rule for their
    type that names no field. An event no rule matches keeps a null severity, which the test
    assert_every_event_has_a_severity reports. -#}

with

events as (

    select * from {{ ref('int_events_watched') }}

),

field_changes as (

    select * from {{ ref('int_field_changes_scored') }}

),

rules as (

    select * from {{ ref('severity_rules') }}

),

changed_event_rules as (

    select
        as_of_date,
        dmf_key,
        min(rule_priority) as priority

    from field_changes
    group by as_of_date, dmf_key

),

whole_event_rules as (

    select
        events.as_of_date,
        events.dmf_key,
        min(rules.priority) as priority

    from events
    inner join rules
        on rules.field_name is null
        and {{ rule_applies('rules', 'events.event_type', 'null', 'events.on_watchlist', 'null', 'null') }}
    where events.event_type in ('NEW', 'REINSTATED', 'WITHDRAWN')
    group by events.as_of_date, events.dmf_key

),

event_rules as (

    select * from changed_event_rules
    union all
    select * from whole_event_rules

),

scored as (

    select
        events.*,
        event_rules.priority as rule_priority,
        rules.severity,
        {{ severity_rank('rules.severity') }} as severity_rank,
        rules.rationale,
        rules.rationale_ko

    from events
    left join event_rules
        on events.as_of_date = event_rules.as_of_date
        and events.dmf_key = event_rules.dmf_key
    left join rules
        on event_rules.priority = rules.priority

)

select * from scored
