{#- Identity, step zero: the keys each record of each load of the sequence is matched on. A view:
    each load's membership joined to the keys of the row versions it names, so that a record
    unchanged for a year is keyed once, not stored again with its keys every day (at day 365 the
    table this replaces was 257 of a 577 MiB warehouse). The identity models read the loads they
    need from it: the new loads and the one before (int_registration_links), the history of the
    numbers and fallback keys that start a chain, by the row versions that carry them
    (int_registration_reinstatements). -#}

{{ config(materialized='view') }}

with

loads as (

    select load_id, load_seq from {{ ref('int_loads_sequenced') }}

),

memberships as (

    select record_id, load_id, row_hash from {{ ref('stg_mfds__load_items') }}

),

versions as (

    select row_hash, permit_no_key, fallback_key, loose_key from {{ ref('stg_mfds__item_versions') }}

),

appearances as (

    select
        memberships.record_id,
        memberships.load_id,
        loads.load_seq,
        memberships.row_hash,
        versions.permit_no_key,
        versions.fallback_key,
        versions.loose_key

    from memberships
    inner join loads
        on memberships.load_id = loads.load_id
    inner join versions
        on memberships.row_hash = versions.row_hash

)

select * from appearances
