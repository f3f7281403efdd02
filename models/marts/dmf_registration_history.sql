{#- Type-2 history of the registry across the accepted loads: a new version starts when any
    displayed field of a registration differs from its previous accepted load
    (int_registration_versions, incremental), and ends on the first accepted load without it.
    Built from the append-only raw loads rather than a dbt snapshot, so a full refresh
    rebuilds it. -#}

with

versions as (

    select * from {{ ref('int_registration_versions') }}

),

loads as (

    select load_seq, as_of_date from {{ ref('int_loads_accepted') }}

),

closed as (

    select
        versions.*,
        next_load.as_of_date as valid_to,
        next_load.as_of_date is null as is_current

    from versions
    left join loads as next_load
        on next_load.load_seq = versions.last_load_seq + 1

)

-- sqlfluff asks for a different indent of the `endfor` line on each pass over the loop: LT02 is off there
select
    dmf_key,
    version_no,
    valid_from,
    valid_to,
    is_current
    {%- for field in registration_fields() %},
    {{ field }}
    {% endfor %} -- noqa: LT02

from closed
