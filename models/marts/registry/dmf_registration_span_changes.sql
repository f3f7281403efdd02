{#- The net change of a registration between any two of its states, one row per ordered pair:
    `dmf changes --since D1 --until D2` picks, per registration, the pair whose first state is
    valid on the accepted day at or before D1 and whose second is valid on the one at or before
    D2 (valid_from <= day < valid_to, open ends null). A registration whose state is the same
    on both days has no row for them: nothing changed.

    Stages:
      1. states: a registration is, in turn, not yet listed (before its first version), listed
         (one per version of dmf_registration_history) and absent (from the first accepted
         load without it to its next version, if any);
      2. pairs of its states, each with how many listed and absent states lie strictly between;
      3. the net change: NEW (not yet listed -> listed), REINSTATED (absent -> listed),
         WITHDRAWN (listed -> absent), CHANGED (two versions whose fields differ:
         dmf_registration_version_changes), and what a net diff would hide: CHANGED_BACK (two
         versions with the same fields, changed in between), WITHDRAWN_AND_BACK (the same
         fields, absent in between), APPEARED_AND_WITHDRAWN (not yet listed -> absent) and
         REINSTATED_AND_WITHDRAWN (absent -> absent, listed in between);
      4. the severity from today's rules: a CHANGED takes its fields' first rule (as a daily
         CHANGED event does); the others the first rule naming no field for the event type
         they amount to (a registration gone at the end is scored as a WITHDRAWN, one back as
         a REINSTATED, a change undone as a CHANGED with no field), with the watch flag of
         either end (int_registration_versions_watched; an absent state carries the flag of
         the version that disappeared). -#}

{#- Without JIT on PostgreSQL: the pairs self-join the states CTE, estimated at 396,124 rows for
    9,271, so PostgreSQL compiled the plan: 0.23 s of the model's 0.50 s at day 6 (EXPLAIN ANALYZE,
    benchmarks/explain_models.py, issue 40). -#}
{{ config(pre_hook="{{ without_jit() }}") }}

with

history as (

    select * from {{ ref('dmf_registration_history') }}

),

field_changes as (

    select * from {{ ref('dmf_registration_version_changes') }}

),

watched as (

    select * from {{ ref('int_registration_versions_watched') }}

),

rules as (

    select * from {{ ref('severity_rules') }}

),

versions as (

    select
        dmf_key,
        cast(version_no as {{ dbt.type_bigint() }}) as version_no,
        valid_from,
        valid_to,
        lead(valid_from) over (partition by dmf_key order by version_no) as next_valid_from,
        row_number() over (partition by dmf_key order by version_no) as version_rank

    from history

),

states as (

    select
        dmf_key,
        'not_listed' as state,
        cast(null as {{ dbt.type_bigint() }}) as version_no,
        cast(null as date) as valid_from,
        valid_from as valid_to

    from versions
    where version_rank = 1

    union all

    select
        dmf_key,
        'listed' as state,
        version_no,
        valid_from,
        valid_to

    from versions

    union all

    select
        dmf_key,
        'absent' as state,
        version_no,
        valid_to as valid_from,
        next_valid_from as valid_to

    from versions
    where valid_to is not null
        and (next_valid_from is null or next_valid_from > valid_to)

),

states_numbered as (

    select
        *,
        row_number() over (
            partition by dmf_key order by valid_from nulls first
        ) as state_no

    from states

),

states_counted as (

    select
        *,
        sum(case when state = 'listed' then 1 else 0 end) over (
            partition by dmf_key order by state_no rows unbounded preceding
        ) as listed_through,
        sum(case when state = 'absent' then 1 else 0 end) over (
            partition by dmf_key order by state_no rows unbounded preceding
        ) as absent_through

    from states_numbered

),

pairs as (

    select
        from_state.dmf_key,
        from_state.state_no as from_state_no,
        to_state.state_no as to_state_no,
        from_state.state as from_state,
        to_state.state as to_state,
        from_state.valid_from as from_valid_from,
        from_state.valid_to as from_valid_to,
        to_state.valid_from as to_valid_from,
        to_state.valid_to as to_valid_to,
        from_state.version_no as from_version_no,
        to_state.version_no as to_version_no,
        to_state.listed_through - from_state.listed_through
        - case when to_state.state = 'listed' then 1 else 0 end as listed_between,
        to_state.absent_through - from_state.absent_through
        - case when to_state.state = 'absent' then 1 else 0 end as absent_between

    from states_counted as from_state
    inner join states_counted as to_state
        on from_state.dmf_key = to_state.dmf_key
        and from_state.state_no < to_state.state_no

),

pair_fields as (

    select
        dmf_key,
        from_version_no,
        to_version_no,
        count(*) as changed_fields,
        min(rule_priority) as field_rule_priority

    from field_changes
    group by dmf_key, from_version_no, to_version_no

),

kinds as (

    select
        pairs.*,
        coalesce(pair_fields.changed_fields, 0) as changed_fields,
        pair_fields.field_rule_priority,
        case
            when pairs.from_state = 'not_listed' and pairs.to_state = 'listed' then 'NEW'
            when pairs.from_state = 'absent' and pairs.to_state = 'listed' then 'REINSTATED'
            when pairs.from_state = 'listed' and pairs.to_state = 'absent' then 'WITHDRAWN'
            when pairs.from_state = 'not_listed' then 'APPEARED_AND_WITHDRAWN'
            when pairs.from_state = 'absent' then 'REINSTATED_AND_WITHDRAWN'
            when pair_fields.changed_fields > 0 then 'CHANGED'
            when pairs.absent_between > 0 then 'WITHDRAWN_AND_BACK'
            else 'CHANGED_BACK'
        end as net_change

    from pairs
    left join pair_fields
        on pairs.dmf_key = pair_fields.dmf_key
        and pairs.from_version_no = pair_fields.from_version_no
        and pairs.to_version_no = pair_fields.to_version_no
        and pairs.from_state = 'listed'
        and pairs.to_state = 'listed'

),

kinds_watched as (

    select
        kinds.*,
        case
            when kinds.net_change = 'NEW' then 'NEW'
            when kinds.net_change in ('REINSTATED', 'WITHDRAWN_AND_BACK') then 'REINSTATED'
            when kinds.net_change in ('CHANGED', 'CHANGED_BACK') then 'CHANGED'
            else 'WITHDRAWN'
        end as rule_event_type,
        (
            coalesce(from_watch.on_watchlist, false) or coalesce(to_watch.on_watchlist, false)
        ) as on_watchlist,
        coalesce(to_watch.watch_terms, from_watch.watch_terms) as watch_terms,
        coalesce(to_watch.watch_matches, from_watch.watch_matches) as watch_matches,
        coalesce(to_watch.watch_owners, from_watch.watch_owners) as watch_owners

    from kinds
    left join watched as from_watch
        on kinds.dmf_key = from_watch.dmf_key
        and kinds.from_version_no = from_watch.version_no
    left join watched as to_watch
        on kinds.dmf_key = to_watch.dmf_key
        and kinds.to_version_no = to_watch.version_no

),

whole_rules as (

    select
        kinds_watched.dmf_key,
        kinds_watched.from_state_no,
        kinds_watched.to_state_no,
        min(rules.priority) as priority

    from kinds_watched
    inner join rules
        on rules.field_name is null
        and {{ rule_applies(
            'rules', 'kinds_watched.rule_event_type', 'null', 'kinds_watched.on_watchlist', 'null', 'null'
        ) }}
    where kinds_watched.net_change <> 'CHANGED'
    group by kinds_watched.dmf_key, kinds_watched.from_state_no, kinds_watched.to_state_no

),

scored as (

    select
        kinds_watched.dmf_key,
        kinds_watched.from_state_no,
        kinds_watched.to_state_no,
        kinds_watched.from_state,
        kinds_watched.to_state,
        kinds_watched.from_valid_from,
        kinds_watched.from_valid_to,
        kinds_watched.to_valid_from,
        kinds_watched.to_valid_to,
        kinds_watched.from_version_no,
        kinds_watched.to_version_no,
        kinds_watched.net_change,
        cast(kinds_watched.changed_fields as {{ dbt.type_bigint() }}) as changed_fields,
        cast(kinds_watched.listed_between as {{ dbt.type_bigint() }}) as listed_between,
        cast(kinds_watched.absent_between as {{ dbt.type_bigint() }}) as absent_between,
        from_version.permit_no as from_permit_no,
        to_version.permit_no as to_permit_no,
        from_version.ingredient_name as from_ingredient_name,
        to_version.ingredient_name as to_ingredient_name,
        from_version.applicant as from_applicant,
        to_version.applicant as to_applicant,
        from_version.applicant_bizrno as from_applicant_bizrno,
        to_version.applicant_bizrno as to_applicant_bizrno,
        from_version.manufacturer as from_manufacturer,
        to_version.manufacturer as to_manufacturer,
        kinds_watched.on_watchlist,
        kinds_watched.watch_terms,
        kinds_watched.watch_matches,
        kinds_watched.watch_owners,
        rules.priority as rule_priority,
        rules.severity,
        {{ severity_rank('rules.severity') }} as severity_rank,
        rules.rationale,
        rules.rationale_ko

    from kinds_watched
    left join whole_rules
        on kinds_watched.dmf_key = whole_rules.dmf_key
        and kinds_watched.from_state_no = whole_rules.from_state_no
        and kinds_watched.to_state_no = whole_rules.to_state_no
    left join rules
        on coalesce(kinds_watched.field_rule_priority, whole_rules.priority) = rules.priority
    left join history as from_version
        on kinds_watched.dmf_key = from_version.dmf_key
        and kinds_watched.from_version_no = from_version.version_no
    left join history as to_version
        on kinds_watched.dmf_key = to_version.dmf_key
        and kinds_watched.to_version_no = to_version.version_no

)

select * from scored
