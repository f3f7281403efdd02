{#- Type-2 history of the registry rebuilt from the accepted loads: a new version starts when
    any displayed field of a registration differs from its previous accepted load. Built from
    the append-only raw loads rather than a dbt snapshot, so a full refresh rebuilds it. -#}

with

keyed as (

    select * from {{ ref('int_registrations_keyed') }}
    where load_id in (select load_id from {{ ref('int_loads_accepted') }})

),

hashed as (

    select
        *,
        md5(concat_ws(
            '|'
            {%- for field in registration_fields() %},
            coalesce({{ field }}, '∅')
            {%- endfor %}
        )) as row_hash

    from keyed

),

flagged as (

    select
        *,
        case
            when (lag(row_hash) over (partition by dmf_key order by load_seq) is distinct from row_hash)
                or lag(load_seq) over (partition by dmf_key order by load_seq) <> load_seq - 1
                then 1
            else 0
        end as starts_version

    from hashed

),

versioned as (

    select
        *,
        sum(starts_version) over (partition by dmf_key order by load_seq rows unbounded preceding) as version_no

    from flagged

),

versions as (

    -- noqa below: sqlfluff asks for a different indent of the `endfor` line on each pass over the loop
    select
        dmf_key,
        version_no,
        min(as_of_date) as valid_from,
        max(as_of_date) as last_seen_as_of,
        min(load_seq) as first_load_seq,
        max(load_seq) as last_load_seq
        {%- for field in registration_fields() %},
        any_value({{ field }}) as {{ field }}
        {% endfor %} -- noqa: LT02

    from versioned
    group by dmf_key, version_no

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

-- noqa below: sqlfluff asks for a different indent of the `endfor` line on each pass over the loop
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
