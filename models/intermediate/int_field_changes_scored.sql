{#- Every field change with its severity: the first severity rule (lowest priority number) that
    matches its event type, field, watchlist flag, change kind and change detail. -#}

with

field_changes as (

    select * from {{ ref('int_field_changes') }}

),

events as (

    select * from {{ ref('int_events_watched') }}

),

rules as (

    select * from {{ ref('severity_rules') }}

),

matching_rules as (

    select
        field_changes.as_of_date,
        field_changes.dmf_key,
        field_changes.field_name,
        rules.priority,
        row_number() over (
            partition by field_changes.as_of_date, field_changes.dmf_key, field_changes.field_name
            order by rules.priority
        ) as rule_rank

    from field_changes
    inner join events
        on field_changes.as_of_date = events.as_of_date
        and field_changes.dmf_key = events.dmf_key
    inner join rules
        on {{ rule_applies(
            'rules', "'CHANGED'", 'field_changes.field_name', 'events.on_watchlist',
            'field_changes.change_kind', 'field_changes.change_detail'
        ) }}

),

scored as (

    select
        field_changes.*,
        events.on_watchlist,
        matching_rules.priority as rule_priority,
        rules.severity,
        {{ severity_rank('rules.severity') }} as severity_rank,
        rules.rationale,
        rules.rationale_ko

    from field_changes
    inner join events
        on field_changes.as_of_date = events.as_of_date
        and field_changes.dmf_key = events.dmf_key
    left join matching_rules
        on field_changes.as_of_date = matching_rules.as_of_date
        and field_changes.dmf_key = matching_rules.dmf_key
        and field_changes.field_name = matching_rules.field_name
        and matching_rules.rule_rank = 1
    left join rules
        on matching_rules.priority = rules.priority

)

select * from scored
