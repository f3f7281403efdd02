{#- Every field change must get exactly one severity from seeds/severity_rules.csv. A row here
    names a change no rule matched: add a rule (or restore the catch-all). It sits on
    int_field_changes_scored alone, so that its failure makes `dbt build` skip every mart
    built from it (dmf_event_field_changes keeps its last good rows, no NULL severity). -#}

select
    as_of_date,
    dmf_key,
    'CHANGED' as event_type,
    field_name,
    'no severity rule matches the change of ' || field_name || ': add a rule to seeds/severity_rules.csv' as problem
from {{ ref('int_field_changes_scored') }}
where severity is null
