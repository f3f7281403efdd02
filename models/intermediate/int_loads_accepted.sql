{#- The loads whose events may be published: in the sequence and fired no gate (or a person
    accepted it after one fired). Every model that publishes events or the registry selects
    from here, so a failing gate test on int_load_signals makes `dbt build` skip them all. -#}

with

loads as (

    select * from {{ ref('int_loads_sequenced') }}

),

gated as (

    select distinct load_id
    from {{ ref('int_load_signals') }}
    where is_gate and fired and not accepted_by_person

)

select * from loads
where load_id not in (select load_id from gated)
