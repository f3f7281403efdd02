{#- Incremental models that hold rows per load of the sequence (int_registration_appearances,
    int_registration_links, int_registration_reinstatements, int_registrations_keyed,
    int_field_changes, int_registration_events). Each row carries the load_id and load_seq it was
    computed for. A run computes only the loads after the newest one the table holds; the
    pre-hook first forgets every row from the first place where the table and the sequence
    (int_loads_sequenced) part ways, so that the rows kept are exactly those a full refresh
    would compute:
      - a load rejected after its build (a gate fired, a person rejected it) leaves the sequence:
        its rows go;
      - a load inserted before loads already built (`dmf backfill --insert-before-published`,
        a person accepting a rejected load) moves every later load one place on: the rows of
        those loads no longer match their (load_id, load_seq), so every row from the first
        moved load on goes, and the run computes those loads again in order.
    Every load after that place is computed again because identity is a chain: a load's keys
    come from the load before it. Portable SQL only (delete with subqueries). -#}

{% macro incremental_load_watermark() -%}
    {#- The newest load_seq the table holds (0 when it holds none, or on a full refresh): the
        model computes the loads after it. A load that produced no row (no event that day) is
        computed again on the next run, and produces no row again. -#}
    {%- if is_incremental() -%}
    (select coalesce(max(load_seq), 0) from {{ this }})
    {%- else -%}
    0
    {%- endif -%}
{%- endmacro %}


{% macro forget_loads_out_of_sequence() -%}
    {#- Pre-hook of the incremental per-load models, on incremental runs only. -#}
    {%- if is_incremental() %}
    delete from {{ this }}
    where load_seq >= (
        select min(held.load_seq)
        from (select distinct load_id, load_seq from {{ this }}) as held
        left join {{ ref('int_loads_sequenced') }} as sequenced
            on sequenced.load_id = held.load_id
            and sequenced.load_seq = held.load_seq
        where sequenced.load_id is null
    )
    {%- endif %}
{%- endmacro %}
