{#- One row per field that differs between a registration's record in a load and its record in
    the previous load of the sequence. Values are compared as displayed (whitespace never
    counts); the change is cosmetic when the comparison keys are equal.

    List fields (manufacturer, manufacture_place, countries) hold several entries joined by
    commas. Their change is also described entry by entry (macros/field_changes.sql:
    list_entry_diffs, change_kind, change_detail), so a reader sees which manufacturer left
    rather than two long strings; dmf_registration_version_changes describes the change
    between any two versions of a registration with the same macros.

    Incremental (macros/incremental_loads.sql): a run compares only the loads after the newest
    one held with the load before each. -#}

{#- without_nested_loops on PostgreSQL: as in int_registration_events, the planner multiplies
    `keyed`'s correlated filters and took a day-365 morning's 18,700 records for one row, then
    paired them by a nested loop: 111-116 s a morning (bench_history.py, issue 40). -#}
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    on_schema_change='fail',
    pre_hook=["{{ forget_loads_out_of_sequence() }}", "{{ without_nested_loops() }}"],
) }}

{%- set watermark = incremental_load_watermark() %}

with

new_loads as (

    select load_seq from {{ ref('int_loads_sequenced') }}
    where load_seq > {{ watermark }}

),

keyed as (

    select * from {{ ref('int_registration_records') }}
    where load_seq >= {{ watermark }}
        and {{ load_id_of_loads_from(watermark) }}
        and load_seq >= (select min(load_seq) - 1 from new_loads)

),

pairs as (

    -- sqlfluff asks for a different indent of the `endfor` line on each pass over the loop: LT02 is off there
    select
        current_record.load_id,
        current_record.load_seq,
        current_record.as_of_date,
        current_record.dmf_key
        {%- for field in registration_fields() %},
        previous_record.{{ field }} as {{ field }}_before,
        current_record.{{ field }} as {{ field }}_after,
        previous_record.{{ field }}_key as {{ field }}_before_key,
        current_record.{{ field }}_key as {{ field }}_after_key
        {% endfor %} -- noqa: LT02

    from keyed as current_record
    inner join keyed as previous_record
        on current_record.dmf_key = previous_record.dmf_key
        and previous_record.load_seq = current_record.load_seq - 1
    where current_record.load_seq in (select load_seq from new_loads)

),

unpivoted as (

    {%- for field in registration_fields() %}
    select
        load_id,
        load_seq,
        as_of_date,
        dmf_key,
        permit_no_after as permit_no,
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

    {{ list_entry_diffs('unpivoted', ['load_id', 'dmf_key']) }}

),

classified as (

    select
        unpivoted.load_id,
        unpivoted.load_seq,
        unpivoted.as_of_date,
        unpivoted.dmf_key,
        unpivoted.permit_no,
        unpivoted.field_name,
        unpivoted.before_value,
        unpivoted.after_value,
        {{ change_kind('before_key', 'after_key') }} as change_kind,
        {{ change_detail(
            'unpivoted.field_name', 'before_value', 'after_value', 'before_key', 'after_key',
            'removed_entries', 'added_entries'
        ) }} as change_detail,
        entry_diffs.removed_entries,
        entry_diffs.added_entries

    from unpivoted
    left join entry_diffs
        on unpivoted.load_id = entry_diffs.load_id
        and unpivoted.dmf_key = entry_diffs.dmf_key
        and unpivoted.field_name = entry_diffs.field_name

)

select * from classified
