{#- The records of each load of the sequence that the diff must not read as received, and what
    it reads instead: int_load_items_screened without its one row per load screened, which
    that incremental table keeps so that it knows every load it classified. -#}

{{ config(materialized='view') }}

select
    record_id,
    load_id,
    as_of_date,
    item_position,
    received_row_hash,
    quarantine_kind,
    quarantine_detail,
    permit_no,
    ingredient_name,
    applicant,
    replacement_row_hash,
    replacement_load_id

from {{ ref('int_load_items_screened') }}
where quarantine_kind is not null
