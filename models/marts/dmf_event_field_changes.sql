with

field_changes as (

    select * from {{ ref('int_field_changes_scored') }}

),

accepted as (

    select load_id from {{ ref('int_loads_accepted') }}

),

published as (

    select
        as_of_date,
        dmf_key,
        permit_no,
        field_name,
        before_value,
        after_value,
        change_kind,
        change_detail,
        removed_entries,
        added_entries,
        severity,
        severity_rank,
        rule_priority,
        rationale,
        rationale_ko,
        on_watchlist

    from field_changes
    where load_id in (select load_id from accepted)

)

select * from published
