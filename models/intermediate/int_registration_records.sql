{#- Every record of every load of the sequence with its dmf_key and all its fields: the keys of
    int_registrations_keyed joined back to the fields of stg_mfds__items. A view: the fields of
    a record that did not change since yesterday are stored once, in the raw layer's row
    versions, not again in each load's copy of the registry. A reader names the loads it reads
    by load_id (macros load_id_in_query, load_id_of_loads_after): the join on load_id carries
    that filter to both sides, so DuckDB reads and normalizes only those loads. -#}

{{ config(materialized='view') }}

select
    keyed.dmf_key,
    keyed.match_stage,
    items.*,
    keyed.load_seq

from {{ ref('int_registrations_keyed') }} as keyed
inner join {{ ref('stg_mfds__items') }} as items
    on keyed.load_id = items.load_id
    and keyed.record_id = items.record_id
