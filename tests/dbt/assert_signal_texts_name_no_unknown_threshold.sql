{#- Every {placeholder} in seeds/signal_catalog.csv must be a threshold var the macro
    render_thresholds knows: a row here is a text that would reach the report with the
    placeholder unrendered. Fix the spelling, or add the var to signal_threshold_vars(). -#}

with

catalog as (

    select * from {{ ref('int_signal_catalog_rendered') }}

),

texts as (

    select signal_id, 'description' as column_name, description as catalog_text from catalog
    union all
    select signal_id, 'what_to_check', what_to_check from catalog
    union all
    select signal_id, 'description_ko', description_ko from catalog
    union all
    select signal_id, 'what_to_check_ko', what_to_check_ko from catalog

)

select
    signal_id,
    column_name,
    (
        'unknown placeholder ' || {{ regex_extract('catalog_text', '\\{[a-z_]+\\}') }}
        || ' in seeds/signal_catalog.csv ('
        || column_name || '): use a var named in macro signal_threshold_vars'
    ) as problem
from texts
where {{ regex_matches('catalog_text', '\\{[a-z_]+\\}') }}
