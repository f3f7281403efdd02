{#- A person's verdict on a load (`dmf accept-load` / `dmf reject-load`, dmf/decisions.py)
    lives in the raw layer beside the loads: append-only, the latest decision per load wins.
    The hook creates the table so the source exists before anyone has decided anything. -#}

{% macro create_load_decisions() -%}
    create schema if not exists {{ raw_schema() }};
    create table if not exists {{ raw_schema() }}.load_decisions (
        load_id varchar,
        as_of_date date,
        decision varchar,
        decided_by varchar,
        reason varchar,
        decided_at timestamp with time zone
    )
{%- endmacro %}
