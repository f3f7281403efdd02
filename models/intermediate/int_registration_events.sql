{#- One row per registration that appeared, changed or disappeared between a load and the
    previous load of the sequence. The baseline (first load) has no events. A CHANGED event is
    cosmetic when every one of its field changes is. A registration that comes back after a
    withdrawal (int_registration_reinstatements) is REINSTATED, not NEW, and says how many days
    it was absent.

    Incremental (macros/incremental_loads.sql): a run derives the events of the loads after the
    newest one held (a load without any event is looked at again next time, and gives none). -#}

{#- without_nested_loops on PostgreSQL: `keyed` filters one table on a literal load_seq bound,
    a literal list of the same loads and the first new load's place, which the planner
    multiplies as if independent: at day 365 it took the 18,700 records of a morning for one
    row and joined each read of them by rescanning them per row (over 2 minutes for one load,
    bench_history.py, issue 40). -#}
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    on_schema_change='fail',
    pre_hook=["{{ forget_loads_out_of_sequence() }}", "{{ without_nested_loops() }}"],
) }}

{%- set watermark = incremental_load_watermark() %}

with

loads as (

    select * from {{ ref('int_loads_sequenced') }}
    where load_seq > {{ watermark }}

),

keyed as (

    -- the new loads and the load before the first of them
    select * from {{ ref('int_registration_records') }}
    where load_seq >= {{ watermark }}
        and {{ load_id_of_loads_from(watermark) }}
        and load_seq >= (select min(load_seq) - 1 from loads)

),

field_changes as (

    select * from {{ ref('int_field_changes') }}
    where load_seq > {{ watermark }}
        and load_seq in (select load_seq from loads)

),

reinstatements as (

    select * from {{ ref('int_registration_reinstatements') }}
    where match_stage <> 'new_identity'
        and load_seq > {{ watermark }}
        and load_seq in (select load_seq from loads)

),

new_registrations as (

    select
        current_record.load_id,
        current_record.load_seq,
        current_record.as_of_date,
        current_record.dmf_key,
        current_record.record_id,
        case when reinstatements.record_id is null then 'NEW' else 'REINSTATED' end as event_type,
        reinstatements.absent_days

    from keyed as current_record
    inner join loads
        on current_record.load_id = loads.load_id
    left join reinstatements
        on current_record.record_id = reinstatements.record_id
    where not loads.is_baseline
        and not exists (
            select 1 from keyed as previous_record
            where previous_record.dmf_key = current_record.dmf_key
                and previous_record.load_seq = current_record.load_seq - 1
        )

),

withdrawn_registrations as (

    select
        loads.load_id,
        loads.load_seq,
        loads.as_of_date,
        previous_record.dmf_key,
        previous_record.record_id,
        'WITHDRAWN' as event_type,
        cast(null as integer) as absent_days

    from keyed as previous_record
    inner join loads
        on loads.load_seq = previous_record.load_seq + 1
    where
        not exists (
            select 1 from keyed as current_record
            where current_record.dmf_key = previous_record.dmf_key
                and current_record.load_seq = previous_record.load_seq + 1
        )

),

changed_registrations as (

    select
        field_changes.load_id,
        field_changes.load_seq,
        field_changes.as_of_date,
        field_changes.dmf_key,
        current_record.record_id,
        'CHANGED' as event_type,
        cast(null as integer) as absent_days,
        string_agg(field_changes.field_name, ',' order by {{ bytewise('field_changes.field_name') }}) as changed_fields,
        case
            when bool_and(field_changes.change_kind = 'cosmetic') then 'cosmetic'
            else 'substantive'
        end as change_kind

    from field_changes
    inner join keyed as current_record
        on field_changes.dmf_key = current_record.dmf_key
        and field_changes.load_seq = current_record.load_seq
    group by 1, 2, 3, 4, 5

),

events as (

    select *, null as changed_fields, null as change_kind from new_registrations
    union all
    select *, null as changed_fields, null as change_kind from withdrawn_registrations
    union all
    select * from changed_registrations

),

described as (

    select
        events.as_of_date || ':' || events.dmf_key as event_id,
        events.as_of_date,
        events.load_id,
        events.load_seq,
        events.dmf_key,
        events.event_type,
        events.record_id,
        previous_record.record_id as previous_record_id,
        keyed.permit_no,
        keyed.ingredient_name,
        keyed.ingredient_name_key,
        keyed.applicant,
        keyed.applicant_bizrno,
        keyed.applicant_bizrno_key,
        keyed.manufacturer,
        keyed.manufacturer_key,
        keyed.manufacture_place,
        keyed.countries,
        keyed.permit_date_parsed as permit_date,
        keyed.notice_code,
        keyed.permit_group,
        keyed.permit_class,
        events.changed_fields,
        events.change_kind,
        events.absent_days

    from events
    inner join keyed
        on events.record_id = keyed.record_id
    left join keyed as previous_record
        on events.dmf_key = previous_record.dmf_key
        and previous_record.load_seq = events.load_seq - 1

)

select * from described
