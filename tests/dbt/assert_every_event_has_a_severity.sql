{#- Every event and every field change must get exactly one severity from seeds/severity_rules.csv.
    A row here names an event no rule matched: add a rule (or restore the catch-all). -#}

select
    as_of_date,
    dmf_key,
    event_type,
    cast(null as varchar) as field_name,
    'no severity rule matches this ' || event_type || ' event: add a rule to seeds/severity_rules.csv' as problem
from {{ ref('int_events_scored') }}
where severity is null

union all

select
    as_of_date,
    dmf_key,
    'CHANGED',
    field_name,
    'no severity rule matches the change of ' || field_name || ': add a rule to seeds/severity_rules.csv'
from {{ ref('int_field_changes_scored') }}
where severity is null
