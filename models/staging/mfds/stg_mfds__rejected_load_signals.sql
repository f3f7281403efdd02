with

source as (

    select * from {{ source('mfds', 'rejected_load_signals') }}

),

renamed as (

    select
        {{ signal_column_list() }}
        recorded_at

    from source

)

select * from renamed
