{#- Every event must get exactly one severity from seeds/severity_rules.csv. A row here names an
    event no rule matched: add a rule (or restore the catch-all). It sits on int_events_scored
    alone, so that its failure makes `dbt build` skip every mart built from it (dmf_events and
    all that read it keep their last good rows); field changes have their own test. -#}

select
    as_of_date,
    dmf_key,
    event_type,
    cast(null as varchar) as field_name,
    'no severity rule matches this ' || event_type || ' event: add a rule to seeds/severity_rules.csv' as problem
from {{ ref('int_events_scored') }}
where severity is null
