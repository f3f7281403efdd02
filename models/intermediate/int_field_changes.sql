{#- One row per field that differs between a registration's record in a load and its record in
    the previous load of the sequence. Values are compared as displayed (whitespace never
    counts); the change is cosmetic when the comparison keys are equal. -#}

with

keyed as (

    select * from {{ ref('int_registrations_keyed') }}

),

pairs as (

    select
        current_record.load_id,
        current_record.load_seq,
        current_record.as_of_date,
        current_record.dmf_key,
        current_record.permit_no as permit_no_after,
        {%- for field in registration_fields() %}
        previous_record.{{ field }} as {{ field }}_before,
        current_record.{{ field }} as {{ field }}_after,
        previous_record.{{ field }}_key as {{ field }}_before_key,
        current_record.{{ field }}_key as {{ field }}_after_key{{ "," if not loop.last }}
        {%- endfor %}

    from keyed as current_record
    inner join keyed as previous_record
        on previous_record.dmf_key = current_record.dmf_key
        and previous_record.load_seq = current_record.load_seq - 1

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

classified as (

    select
        load_id,
        load_seq,
        as_of_date,
        dmf_key,
        permit_no,
        field_name,
        before_value,
        after_value,
        case
            when before_key is not distinct from after_key then 'cosmetic'
            else 'substantive'
        end as change_kind,
        case
            when before_key is not distinct from after_key then 'cosmetic'
            when field_name = 'permit_no' and before_value is null then 'assigned'
            when field_name = 'permit_no' and after_value is null then 'removed'
            when field_name = 'permit_no' then 'renumbered'
            when field_name in ('manufacturer', 'countries', 'manufacture_place')
                then {{ list_change_detail('before_value', 'after_value') }}
            else 'modified'
        end as change_detail

    from unpivoted

)

select * from classified
