with

source as (

    select * from {{ source('mfds', 'load_decisions') }}

),

renamed as (

    select
        load_id,
        as_of_date,
        {{ text_lower(trim_spaces('decision')) }} as decision,
        {{ trim_spaces('decided_by') }} as decided_by,
        {{ trim_spaces('reason') }} as reason,
        decided_at,
        decision_seq

    from source

)

select * from renamed
