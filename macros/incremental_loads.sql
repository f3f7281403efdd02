{#- Incremental models that hold rows per load of the sequence (int_load_items_screened,
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
    {#- The newest load_seq the table holds once forget_loads_out_of_sequence has run (0 when it
        holds none, or on a full refresh): the model computes the loads after it. A load that
        produced no row (no event that day) is computed again on the next run, and produces no
        row again; a model whose rows are rare lists what it searched instead
        (int_registration_reinstatements lists every chain start), or every run would compute
        all the loads after its last row.

        Read when the model is compiled (just before its pre-hook runs, after its parents were
        built) and written into the SQL as a number, because DuckDB prunes row groups on a
        literal `load_seq > 41` but scans every row of history for `load_seq > (select ...)`:
        at day 30 that was 13 s instead of under one for int_registrations_keyed alone. So it
        computes what the pre-hook will leave: the rows before the first load held out of
        sequence. -#}
    {%- if not is_incremental() -%}
    0
    {%- elif not execute -%}
    (select coalesce(max(load_seq), 0) from {{ this }})
    {%- else -%}
    {%- set query -%}
    with held as ({{ held_loads(this) }}),
    first_out_of_sequence as (
        select min(held.load_seq) as load_seq
        from held
        left join {{ ref('int_loads_sequenced') }} as sequenced
            on sequenced.load_id = held.load_id
            and sequenced.load_seq = held.load_seq
        where sequenced.load_id is null
    )
    select coalesce(max(held.load_seq), 0)
    from held
    where held.load_seq < coalesce((select load_seq from first_out_of_sequence), held.load_seq + 1)
    {%- endset -%}
    {{ return(run_query(query).columns[0].values()[0] | int) }}
    {%- endif -%}
{%- endmacro %}


{% macro chain_jump_levels(watermark) -%}
    {#- How many doubling levels int_registrations_keyed needs to reach every chain's start: a
        link goes to an earlier load, so a chain crosses at most K of the K loads after
        `watermark`, and level n jumps 2^n links: the smallest n with 2^n >= K. Counted when the
        model runs; while dbt parses or compiles, and in a unit test, 12 (4,096 loads). -#}
    {%- if execute and flags.WHICH in ['run', 'build'] and model.resource_type != 'unit_test' -%}
    {%- set query -%}
    select count(*) from {{ ref('int_loads_sequenced') }} where load_seq > {{ watermark }}
    {%- endset -%}
    {%- set loads = run_query(query).columns[0].values()[0] | int -%}
    {%- set levels = namespace(n=0) -%}
    {%- for _ in range(64) -%}
    {%- if 2 ** levels.n < loads -%}{%- set levels.n = levels.n + 1 -%}{%- endif -%}
    {%- endfor -%}
    {{ return(levels.n) }}
    {%- else -%}
    {{ return(12) }}
    {%- endif -%}
{%- endmacro %}


{% macro load_id_of_loads_after(watermark, column='load_id') -%}
    {#- `column` is one of the loads of the sequence after `watermark`: the filter a model puts
        on stg_mfds__items (see load_id_in_query). -#}
    {{ return(load_id_in_query(
        "select load_id from " ~ ref('int_loads_sequenced') ~ " where load_seq > " ~ watermark, column
    )) }}
{%- endmacro %}


{% macro load_id_of_loads_from(watermark, column='load_id') -%}
    {#- `column` is one of the loads of the sequence from `watermark` on: the new loads and the
        one before them, which the models comparing each load with the previous one read. -#}
    {{ return(load_id_in_query(
        "select load_id from " ~ ref('int_loads_sequenced') ~ " where load_seq >= " ~ watermark, column
    )) }}
{%- endmacro %}


{% macro load_id_in_query(query, column='load_id') -%}
    {#- `column` is one of the load ids `query` returns, written as a literal list once the
        model runs: stg_mfds__items is a view over every record of every load, and DuckDB
        computes its text normalization for all of history before it joins or semi-joins it
        with a list of loads (4.8 s at day 30), but prunes on a literal list (0.3 s). Only when
        the model runs (`dbt run`, `dbt build`): while dbt parses or compiles (docs, the SQL
        lint; the tables may not exist yet), on a full refresh (every load anyway), and in a
        unit test (its refs name the fixtures, which exist only inside the test's query), the
        query stays a subquery. -#}
    {%- if execute and flags.WHICH in ['run', 'build'] and not flags.FULL_REFRESH
        and model.resource_type != 'unit_test' -%}
    {%- set ids = run_query(query).columns[0].values() -%}
    {%- if ids | length == 0 -%}
    {{ column }} is null and {{ column }} is not null
    {%- else -%}
    {{ column }} in ({%- for id in ids %}{{ "'" ~ (id | replace("'", "''")) ~ "'" }}{{ ", " if not loop.last }}{%- endfor %})
    {%- endif -%}
    {%- else -%}
    {{ column }} in ({{ query }})
    {%- endif -%}
{%- endmacro %}


{% macro forget_loads_out_of_sequence() -%}
    {#- Pre-hook of the incremental per-load models, on incremental runs only. -#}
    {%- if is_incremental() %}
    delete from {{ this }}
    where load_seq >= (
        select min(held.load_seq)
        from ({{ held_loads(this) }}) as held
        left join {{ ref('int_loads_sequenced') }} as sequenced
            on sequenced.load_id = held.load_id
            and sequenced.load_seq = held.load_seq
        where sequenced.load_id is null
    )
    {%- endif %}
{%- endmacro %}


{% macro held_loads(relation) -%}
    {#- The loads a per-load table holds rows of, (load_id, load_seq) once each, as a query: what
        the watermark and the pre-hook compare with the sequence, twice a build. A `distinct`
        over the table reads every row it holds: on PostgreSQL 0.3 s each for the 3.5 million
        of int_registrations_keyed or int_registration_links at day 365, growing with history.
        A table that declares the index (load_seq, load_id) (meta.postgres_indexes, created by
        create_declared_indexes before any model compiles) and has it is read on PostgreSQL by a
        walk of that index from one load to the next: one index probe a load held. (Without the
        index, each probe would scan the table.) -#}
    {{ return(adapter.dispatch('held_loads', 'dmf_watch')(relation)) }}
{%- endmacro %}

{% macro default__held_loads(relation) -%}
    select distinct load_id, load_seq from {{ relation }}
{%- endmacro %}

{% macro postgres__held_loads(relation) -%}
    {%- if ['load_seq', 'load_id'] not in model.config.meta.get('postgres_indexes', [])
        or not postgres_index_exists(relation.schema, declared_index_name(relation.identifier, ['load_seq', 'load_id'])) -%}
    {{ return(default__held_loads(relation)) }}
    {%- endif -%}
    with recursive held_load as (
        (
            select load_seq, load_id from {{ relation }}
            order by load_seq, load_id
            limit 1
        )
        union all
        select next_load.load_seq, next_load.load_id
        from held_load
        cross join lateral (
            select load_seq, load_id from {{ relation }}
            where (load_seq, load_id) > (held_load.load_seq, held_load.load_id)
            order by load_seq, load_id
            limit 1
        ) as next_load
    )
    select load_id, load_seq from held_load
{%- endmacro %}


{% macro registration_versions_resume_point() -%}
    {#- The load_seq after which int_registration_versions continues: the newest load its held
        versions were built on, when every load they name (first and last, by place and date)
        is still at its place in the sequence of accepted loads; 0 otherwise (a full refresh,
        or the sequence changed under them: every load is walked again). Read when the model
        compiles, and again when its pre-hook renders, from the same unchanged table. -#}
    {%- if not (is_incremental() and execute) -%}
    {{ return(0) }}
    {%- endif -%}
    {%- set query -%}
    with held as (
        select distinct first_load_seq as load_seq, valid_from as as_of_date from {{ this }}
        union
        select distinct last_load_seq, last_seen_as_of from {{ this }}
    )
    select
        case
            when count(*) = count(accepted.load_seq) then coalesce(max(held.load_seq), 0)
            else 0
        end
    from held
    left join {{ ref('int_loads_accepted') }} as accepted
        on accepted.load_seq = held.load_seq
        and accepted.as_of_date = held.as_of_date
    {%- endset -%}
    {{ return(run_query(query).columns[0].values()[0] | int) }}
{%- endmacro %}


{% macro forget_versions_out_of_sequence() -%}
    {#- Pre-hook of int_registration_versions: when its held versions no longer fit the
        sequence, it forgets them all, and the run builds every version again. -#}
    {%- if is_incremental() and registration_versions_resume_point() == 0 %}
    delete from {{ this }}
    {%- endif %}
{%- endmacro %}
