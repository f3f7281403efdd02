{#- A person's standing decision per load: the latest of its recorded decisions wins (in the order
    the warehouse recorded them, decision_seq; decisions from before it by their clock), so accepting
    a load again after rejecting it (or the reverse) needs no deletion. -#}

with

decisions as (

    select * from {{ ref('stg_mfds__load_decisions') }}

),

ranked as (

    select
        *,
        row_number() over (
            partition by load_id order by decision_seq desc nulls last, decided_at desc, {{ bytewise('decision') }} asc
        ) as decision_rank

    from decisions

),

latest as (

    select
        load_id,
        as_of_date,
        decision,
        decided_by,
        reason as decision_reason,
        decided_at

    from ranked
    where decision_rank = 1

)

select * from latest
