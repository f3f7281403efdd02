with

source as (

    select * from {{ source('mfds', 'rejected_load_signals') }}

),

renamed as (

    select
        load_id,
        as_of_date,
        signal_id,
        is_gate,
        fired,
        severity,
        observed,
        baseline,
        baseline_text,
        window_text,
        context,
        description,
        recorded_at

    from source

)

select * from renamed
