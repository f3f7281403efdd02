{#- The loader's load_runs beside how many item rows each load really left in the raw layer.
    A base model (dbt's pattern for a join staging needs): the count is what tells a load whose
    rows are all there from one cut short while writing (a crash mid-package), which the
    loader's own verdict cannot know. -#}

with

load_runs as (

    select * from {{ source('mfds', 'load_runs') }}

),

stored_items as (

    select load_id, stored_item_count from {{ ref('base_mfds__load_item_counts') }}

),

checked as (

    select
        load_runs.load_id,
        load_runs.as_of_date,
        load_runs.started_at,
        load_runs.finished_at,
        load_runs.duration_s,
        load_runs.fetch_status,
        load_runs.reason,
        load_runs.total_count,
        load_runs.fetched_count,
        load_runs.distinct_count,
        load_runs.duplicate_count,
        load_runs.pages,
        load_runs.requests,
        load_runs.retries,
        load_runs.attempts,
        load_runs.result_codes,
        load_runs.source_url,
        {{ column_or_null(source('mfds', 'load_runs'), 'schema_drift') }},
        {{ column_or_null(source('mfds', 'load_runs'), 'attempt_seq', 'bigint') }},
        coalesce(stored_items.stored_item_count, 0) as stored_item_count

    from load_runs
    left join stored_items
        on load_runs.load_id = stored_items.load_id

)

select * from checked
