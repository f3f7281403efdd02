with

events as (

    select * from {{ ref('int_events_scored') }}

),

accepted as (

    select load_id from {{ ref('int_loads_accepted') }}

),

published as (

    select
        event_id,
        as_of_date,
        load_id,
        dmf_key,
        permit_no,
        event_type,
        severity,
        severity_rank,
        rule_priority,
        rationale,
        rationale_ko,
        on_watchlist,
        watch_terms,
        watch_matches,
        watch_owners,
        ingredient_name,
        applicant,
        applicant_bizrno,
        manufacturer,
        manufacture_place,
        countries,
        permit_date,
        notice_code,
        permit_group,
        permit_class,
        changed_fields,
        change_kind,
        absent_days

    from events
    where load_id in (select load_id from accepted)

)

select * from published
