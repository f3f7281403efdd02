{#- Deviation from the staging style (README), in both branches:
    - a semi-join filter on the usable loads, so that no row of a failed, incomplete or
      half-written load (colliding positions, missing rows) ever reaches a model or a test
      (stg_mfds__items is these rows with their fields); such loads stay in raw (the view
      mfds_raw.dmf_items) for inspection;
    - the records a load holds that the models cannot read (int_load_items_quarantined) are
      replaced by their registration's last good version, or dropped, here, so that no model
      downstream reads one as received.
    Each branch reads its tables itself, with no CTE that both read: PostgreSQL computes a CTE
    read twice once and in full, and then cannot merge the view into the query that reads it, so
    no filter or join of that query reaches the raw table's indexes. -#}

with

received as (

    select
        {{ record_id('received.load_id', 'received.item_position') }} as record_id,
        received.load_id,
        received.as_of_date,
        received.item_position,
        received.page_no,
        received.repeat_count,
        received.row_hash,
        false as is_quarantined

    from {{ source('mfds', 'dmf_load_items') }} as received
    where received.load_id in (
            select load_id from {{ ref('stg_mfds__load_runs') }}
            where is_usable
        )
        and not exists (
            select 1 from {{ ref('int_load_items_quarantined') }} as quarantined
            where quarantined.load_id = received.load_id
                and quarantined.item_position = received.item_position
        )

),

replaced as (

    select
        {{ record_id('received.load_id', 'received.item_position') }} as record_id,
        received.load_id,
        received.as_of_date,
        received.item_position,
        received.page_no,
        received.repeat_count,
        quarantined.replacement_row_hash as row_hash,
        true as is_quarantined

    from {{ source('mfds', 'dmf_load_items') }} as received
    inner join {{ ref('int_load_items_quarantined') }} as quarantined
        on received.load_id = quarantined.load_id
        and received.item_position = quarantined.item_position
    where received.load_id in (
            select load_id from {{ ref('stg_mfds__load_runs') }}
            where is_usable
        )
        and quarantined.replacement_row_hash is not null

),

load_items as (

    {#- Two branches, not one left join with coalesce(replacement, received): row_hash stays
        the raw column in the branch that holds nearly every record, so that a lookup by it
        reaches the raw table's index on PostgreSQL (int_registration_reinstatements looks up
        the history of a few keys through the row versions that carry them). -#}
    select * from received
    union all
    select * from replaced

)

select * from load_items
