with

source as (

    select * from {{ source('mfds', 'load_runs') }}

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
        {{ column_or_null(source('mfds', 'load_runs'), 'schema_drift') }}

    from source

)

select * from renamed
