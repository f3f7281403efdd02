{#- A person's verdict on a load (`dmf accept-load` / `dmf reject-load`, dmf_watch/commands/decisions.py)
    lives in the raw layer beside the loads: append-only, the latest decision per load wins,
    latest by decision_seq (the order the warehouse recorded them in, never a clock). The hook
    creates the table so the source exists before anyone has decided anything, and gives a table
    from before decision_seq the column. -#}

{% macro create_load_decisions() -%}
    create schema if not exists {{ raw_schema() }};
    create table if not exists {{ raw_schema() }}.load_decisions (
        load_id varchar,
        as_of_date date,
        decision varchar,
        decided_by varchar,
        reason varchar,
        decided_at timestamp with time zone
    );
    alter table {{ raw_schema() }}.load_decisions add column if not exists decision_seq bigint
{%- endmacro %}
