{#- The versions of every registration across the accepted loads (the type-2 history that
    dmf_registration_history publishes): a new version starts when any displayed field differs
    from the registration's previous accepted load, or when it comes back after an absence.

    Incremental, so that a day's build does not walk every record of every load again (1.1 s
    at day 30 and linear in history): a run continues the versions the newest built load
    held with the loads after it, and numbers the versions it opens after the highest the
    registration has. A version it extends or opens is written whole (delete+insert on
    dmf_key, version_no). When the held versions no longer match the sequence of accepted
    loads (a load rejected after its build, one inserted before loads already built), the
    pre-hook forgets them all and the run walks every load again, as a full refresh would. -#}

{{ config(
    materialized='incremental',
    incremental_strategy='delete+insert',
    unique_key=['dmf_key', 'version_no'],
    on_schema_change='fail',
    pre_hook="{{ forget_versions_out_of_sequence() }}",
) }}

{%- set resume_after = registration_versions_resume_point() %}

with

accepted as (

    select load_id, load_seq, as_of_date from {{ ref('int_loads_accepted') }}

),

new_records as (

    -- sqlfluff asks for a different indent of the `endfor` line on each pass over the loop: LT02 is off there
    select
        keyed.dmf_key,
        keyed.load_seq,
        keyed.as_of_date,
        md5(concat_ws(
            '|'
            {%- for field in registration_fields() %},
            coalesce(keyed.{{ field }}, '∅')
            {%- endfor %}
        )) as row_hash,
        cast(null as {{ dbt.type_int() }}) as held_version_no,
        cast(null as date) as held_valid_from,
        cast(null as {{ dbt.type_int() }}) as held_first_load_seq
        {%- for field in registration_fields() %},
        keyed.{{ field }}
        {% endfor %} -- noqa: LT02

    from {{ ref('int_registration_records') }} as keyed
    where keyed.load_seq > {{ resume_after }}
        and {{ load_id_of_loads_after(resume_after, 'keyed.load_id') }}
        and keyed.load_id in (select accepted.load_id from accepted)

),

{%- if resume_after > 0 %}

held_open as (

    -- the versions the newest built load held: the new loads may continue them
    -- sqlfluff asks for a different indent of the `endfor` line on each pass over the loop: LT02 is off there
    select
        dmf_key,
        last_load_seq as load_seq,
        last_seen_as_of as as_of_date,
        row_hash,
        version_no as held_version_no,
        valid_from as held_valid_from,
        first_load_seq as held_first_load_seq
        {%- for field in registration_fields() %},
        {{ field }}
        {% endfor %} -- noqa: LT02

    from {{ this }}
    where last_load_seq = {{ resume_after }}
        and dmf_key in (select new_records.dmf_key from new_records)

),

versions_before as (

    select dmf_key, max(version_no) as version_no
    from {{ this }}
    where dmf_key in (select new_records.dmf_key from new_records)
    group by dmf_key

),

{%- endif %}

records as (

    select * from new_records
    {%- if resume_after > 0 %}
    union all
    select * from held_open
    {%- endif %}

),

flagged as (

    select
        *,
        case
            when held_version_no is not null then 0
            when (lag(row_hash) over (partition by dmf_key order by load_seq) is distinct from row_hash)
                or lag(load_seq) over (partition by dmf_key order by load_seq) <> load_seq - 1
                then 1
            else 0
        end as starts_version

    from records

),

numbered as (

    select
        flagged.*,
        {%- if resume_after > 0 %}
        coalesce(versions_before.version_no, 0)
        {%- else %}
        0
        {%- endif %}
        + sum(flagged.starts_version) over (
            partition by flagged.dmf_key order by flagged.load_seq rows unbounded preceding
        ) as version_no

    from flagged
    {%- if resume_after > 0 %}
    left join versions_before
        on flagged.dmf_key = versions_before.dmf_key
    {%- endif %}

)

-- sqlfluff asks for a different indent of the `endfor` line on each pass over the loop: LT02 is off there
select
    dmf_key,
    version_no,
    coalesce(min(held_valid_from), min(as_of_date)) as valid_from,
    max(as_of_date) as last_seen_as_of,
    coalesce(min(held_first_load_seq), min(load_seq)) as first_load_seq,
    max(load_seq) as last_load_seq,
    {{ any_equal_value('row_hash') }} as row_hash
    {%- for field in registration_fields() %},
    {{ any_equal_value(field) }} as {{ field }}
    {% endfor %} -- noqa: LT02

from numbered
group by dmf_key, version_no
