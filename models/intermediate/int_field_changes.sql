{#- One row per field that differs between a registration's record in a load and its record in
    the previous load of the sequence. Values are compared as displayed (whitespace never
    counts); the change is cosmetic when the comparison keys are equal.

    List fields (manufacturer, manufacture_place, countries) hold several entries joined by
    commas. Their change is also described entry by entry, so a reader sees which manufacturer
    left rather than two long strings:
      1. split each side into pieces (list_pieces) and glue legal-form pieces back to the entry
         they end (list_piece_is_suffix), giving the entries in order;
      2. number repeated entries (two sites in one country), so entries compare as a multiset;
      3. an entry of the old value with no equal entry in the new one was removed, and the
         other way round added; change_detail says added, removed, replaced (both) or
         reordered (neither).

    Incremental (macros/incremental_loads.sql): a run compares only the loads after the newest
    one held with the load before each. -#}

{{ config(
    materialized='incremental',
    incremental_strategy='append',
    on_schema_change='fail',
    pre_hook="{{ forget_loads_out_of_sequence() }}",
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

list_sides as (

    {%- for side, value in [('before', 'before_value'), ('after', 'after_value')] %}
    select
        load_id,
        dmf_key,
        field_name,
        '{{ side }}' as side,
        {{ list_pieces(value, 'field_name') }} as pieces
    from unpivoted
    where field_name in ({{ "'" ~ list_fields() | join("', '") ~ "'" }})
        and before_key is distinct from after_key
    {{ "union all" if not loop.last }}
    {%- endfor %}

),

list_pieces as (

    select
        load_id,
        dmf_key,
        field_name,
        side,
        generate_subscripts(pieces, 1) as piece_position,
        unnest(pieces) as piece
    from list_sides

),

pieces_numbered as (

    select
        *,
        sum(case when {{ list_piece_is_suffix('piece') }} then 0 else 1 end) over (
            partition by load_id, dmf_key, field_name, side
            order by piece_position
            rows between unbounded preceding and current row
        ) as entry_position
    from list_pieces

),

entries as (

    select
        load_id,
        dmf_key,
        field_name,
        side,
        entry_position,
        string_agg(piece, ',' order by piece_position) as entry
    from pieces_numbered
    group by load_id, dmf_key, field_name, side, entry_position

),

entries_counted as (

    select
        *,
        row_number() over (
            partition by load_id, dmf_key, field_name, side, entry order by entry_position
        ) as occurrence
    from entries

),

unmatched_entries as (

    select entries_counted.*
    from entries_counted
    left join entries_counted as other_side
        on entries_counted.load_id = other_side.load_id
        and entries_counted.dmf_key = other_side.dmf_key
        and entries_counted.field_name = other_side.field_name
        and entries_counted.side <> other_side.side
        and entries_counted.entry = other_side.entry
        and entries_counted.occurrence = other_side.occurrence
    where other_side.entry is null

),

entry_diffs as (

    select
        load_id,
        dmf_key,
        field_name,
        array_agg(entry order by entry_position) filter (where side = 'before') as removed_entries,
        array_agg(entry order by entry_position) filter (where side = 'after') as added_entries
    from unmatched_entries
    group by load_id, dmf_key, field_name

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
        case
            when (before_key is not distinct from after_key) then 'cosmetic'
            else 'substantive'
        end as change_kind,
        case
            when (before_key is not distinct from after_key) then 'cosmetic'
            when unpivoted.field_name = 'permit_no' and before_value is null then 'assigned'
            when unpivoted.field_name = 'permit_no' and after_value is null then 'removed'
            when unpivoted.field_name = 'permit_no' then 'renumbered'
            when unpivoted.field_name not in ({{ "'" ~ list_fields() | join("', '") ~ "'" }})
                then 'modified'
            when removed_entries is not null and added_entries is not null
                then 'replaced'
            when removed_entries is not null then 'removed'
            when added_entries is not null then 'added'
            else 'reordered'
        end as change_detail,
        entry_diffs.removed_entries,
        entry_diffs.added_entries

    from unpivoted
    left join entry_diffs
        on unpivoted.load_id = entry_diffs.load_id
        and unpivoted.dmf_key = entry_diffs.dmf_key
        and unpivoted.field_name = entry_diffs.field_name

)

select * from classified
