{#- A gate that fires fails `dbt build` (tests on int_load_signals), which skips every model
    that publishes events. These hooks make the rejection stick: the fired load's signals are
    recorded in the raw layer, so the next build compares new loads with the last accepted one
    and a full refresh reproduces the same history. A build holding several new loads (a
    backfill) records one rejection per build, the earliest, so each later load is judged
    against the loads that were really accepted before it. -#}

{% macro raw_schema() -%}
    {{ return(var('raw_schema', 'mfds_raw')) }}
{%- endmacro %}


{% macro create_gate_rejections() -%}
    create schema if not exists {{ raw_schema() }};
    create table if not exists {{ raw_schema() }}.rejected_load_signals (
        load_id varchar,
        as_of_date date,
        signal_id varchar,
        is_gate boolean,
        fired boolean,
        severity varchar,
        observed double,
        baseline double,
        baseline_text varchar,
        window_text varchar,
        context varchar,
        description varchar,
        recorded_at timestamp with time zone
    )
{%- endmacro %}


{% macro record_gate_rejections() -%}
    {%- set signals = none -%}
    {%- if execute and flags.WHICH in ['build', 'run', 'test'] -%}
        {%- set signals = adapter.get_relation(
            database=target.database, schema='intermediate', identifier='int_load_signals'
        ) -%}
    {%- endif -%}
    {%- if signals is not none -%}
        insert into {{ raw_schema() }}.rejected_load_signals
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
            current_timestamp
        from {{ signals }}
        where load_id = (
            {#- Only the earliest fired load: a later load of the same build was compared with it,
                and must be judged again against the last accepted load (dmf/build.py
                builds again until no gate fires), exactly as if the days had been built one
                by one. -#}
            select load_id
            from {{ signals }}
            where is_gate and fired and not accepted_by_person
                and load_id not in (select load_id from {{ raw_schema() }}.rejected_load_signals)
            order by as_of_date, load_id
            limit 1
        )
    {%- else -%}
        select 1
    {%- endif -%}
{%- endmacro %}
