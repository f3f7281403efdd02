with

source as (

    select * from {{ source('mfds', 'load_decisions') }}

),

renamed as (

    select
        load_id,
        as_of_date,
        lower(trim(decision)) as decision,
        trim(decided_by) as decided_by,
        trim(reason) as reason,
        decided_at,
        decision_seq

    from source

)

select * from renamed
