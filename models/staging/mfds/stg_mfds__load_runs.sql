with

source as (

    select * from {{ ref('base_mfds__load_runs') }}

),

renamed as (

    select
        load_id,
        as_of_date,
        started_at,
        finished_at,
        duration_s,
        fetch_status,
        reason,
        total_count,
        fetched_count,
        distinct_count,
        duplicate_count,
        pages,
        requests,
        retries,
        attempts,
        result_codes,
        source_url,
        schema_drift,
        stored_item_count,
        -- the order of attempts is the warehouse's sequence, never the clock: rows written before
        -- the loader assigned one (null) come first, in the order their clock gave them
        row_number() over (
            order by attempt_seq asc nulls first, finished_at asc, {{ bytewise('load_id') }} asc
        ) as attempt_order,
        -- only a complete load whose item rows are all stored may be read: anything else a
        -- failed or cut-short load wrote stays in raw for inspection and is never built on
        fetch_status = 'complete' and stored_item_count = distinct_count as is_usable

    from source

)

select * from renamed
