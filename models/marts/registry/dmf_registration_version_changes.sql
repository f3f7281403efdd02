{#- Every field that differs between two versions of one registration, for every ordered pair
    of its versions (dmf_registration_history), not only consecutive ones: the net change of a
    field over any span is the pair of the versions valid at the span's two ends, whatever
    happened on the days in between. `dmf changes` picks those pairs.

    A field change is classified by the same macros as the daily one (macros/field_changes.sql:
    change_kind, change_detail, list_entry_diffs; int_field_changes), from the comparison keys of
    the record each version starts with, and scored by the same first-matching severity rule
    (rule_applies) with the watch flag of either version (int_registration_versions_watched), as
    int_field_changes_scored scores a day's change with the flag before or after it. -#}

with

versions as (

    select * from {{ ref('int_registration_versions') }}

),

records as (

    select * from {{ ref('int_registration_records') }}

),

watched as (

    select * from {{ ref('int_registration_versions_watched') }}

),

rules as (

    select * from {{ ref('severity_rules') }}

),

version_keys as (

    -- a version's fields are the same on every load it spans: the keys of its first record;
    -- only registrations with a second version have a pair, and most have one: filtered on the
    -- table's version_no (whose statistics the planner reads; a CTE has none), PostgreSQL plans
    -- on the few versions there are (planned on all of them, the diff was taken for 1,846,000
    -- rows where there were 12, and the query JIT-compiled for them: 10.5 s of 10.9 s on day 3)
    -- distinct: a row int_registrations_keyed holds twice is its own key test's to report (the
    -- morning tests that table on its new loads only), not a second version here
    -- sqlfluff asks for a different indent of the `endfor` line on each pass over the loop: LT02 is off there
    select distinct
        versions.dmf_key,
        cast(versions.version_no as {{ dbt.type_bigint() }}) as version_no
        {%- for field in registration_fields() %},
        versions.{{ field }},
        records.{{ field }}_key
        {% endfor %} -- noqa: LT02

    from versions
    inner join records
        on versions.dmf_key = records.dmf_key
        and versions.first_load_seq = records.load_seq
    where
        versions.dmf_key in (
            select changed.dmf_key from {{ ref('int_registration_versions') }} as changed
            where changed.version_no > 1
        )

),

pairs as (

    -- sqlfluff asks for a different indent of the `endfor` line on each pass over the loop: LT02 is off there
    select
        from_version.dmf_key,
        from_version.version_no as from_version_no,
        to_version.version_no as to_version_no
        {%- for field in registration_fields() %},
        from_version.{{ field }} as {{ field }}_before,
        to_version.{{ field }} as {{ field }}_after,
        from_version.{{ field }}_key as {{ field }}_before_key,
        to_version.{{ field }}_key as {{ field }}_after_key
        {% endfor %} -- noqa: LT02

    from version_keys as from_version
    inner join version_keys as to_version
        on from_version.dmf_key = to_version.dmf_key
        and from_version.version_no < to_version.version_no

),

unpivoted as (

    {%- for field in registration_fields() %}
    select
        dmf_key,
        from_version_no,
        to_version_no,
        '{{ field }}' as field_name,
        {{ field }}_before as before_value,
        {{ field }}_after as after_value,
        {{ field }}_before_key as before_key,
        {{ field }}_after_key as after_key
    from pairs
    where {{ field }}_before is distinct from {{ field }}_after
    {{ "union all" if not loop.last }}
    {%- endfor %}

),

entry_diffs as (

    {{ list_entry_diffs('unpivoted', ['dmf_key', 'from_version_no', 'to_version_no']) }}

),

classified as (

    select
        unpivoted.dmf_key,
        unpivoted.from_version_no,
        unpivoted.to_version_no,
        unpivoted.field_name,
        unpivoted.before_value,
        unpivoted.after_value,
        {{ change_kind('before_key', 'after_key') }} as change_kind,
        {{ change_detail(
            'unpivoted.field_name', 'before_value', 'after_value', 'before_key', 'after_key',
            'removed_entries', 'added_entries'
        ) }} as change_detail,
        entry_diffs.removed_entries,
        entry_diffs.added_entries,
        (
            coalesce(from_watch.on_watchlist, false) or coalesce(to_watch.on_watchlist, false)
        ) as on_watchlist

    from unpivoted
    left join entry_diffs
        on unpivoted.dmf_key = entry_diffs.dmf_key
        and unpivoted.from_version_no = entry_diffs.from_version_no
        and unpivoted.to_version_no = entry_diffs.to_version_no
        and unpivoted.field_name = entry_diffs.field_name
    left join watched as from_watch
        on unpivoted.dmf_key = from_watch.dmf_key
        and unpivoted.from_version_no = from_watch.version_no
    left join watched as to_watch
        on unpivoted.dmf_key = to_watch.dmf_key
        and unpivoted.to_version_no = to_watch.version_no

),

matching_rules as (

    select
        classified.dmf_key,
        classified.from_version_no,
        classified.to_version_no,
        classified.field_name,
        min(rules.priority) as priority

    from classified
    inner join rules
        on {{ rule_applies(
            'rules', "'CHANGED'", 'classified.field_name', 'classified.on_watchlist',
            'classified.change_kind', 'classified.change_detail'
        ) }}
    group by
        classified.dmf_key, classified.from_version_no, classified.to_version_no,
        classified.field_name

),

scored as (

    select
        classified.*,
        matching_rules.priority as rule_priority,
        rules.severity,
        {{ severity_rank('rules.severity') }} as severity_rank,
        rules.rationale,
        rules.rationale_ko

    from classified
    left join matching_rules
        on classified.dmf_key = matching_rules.dmf_key
        and classified.from_version_no = matching_rules.from_version_no
        and classified.to_version_no = matching_rules.to_version_no
        and classified.field_name = matching_rules.field_name
    left join rules
        on matching_rules.priority = rules.priority

)

select * from scored
