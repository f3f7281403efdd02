{#- The signal catalog with its texts rendered from the threshold vars (macro
    render_thresholds): the only model that reads the seed, so every text a report or a prompt
    shows states the thresholds the gates used in this build. A view: the vars are written into
    its SQL by every build, and the table's materialization cost more than every read of its
    few rows. -#}

{{ config(materialized='view') }}

with

catalog as (

    select * from {{ ref('signal_catalog') }}

),

rendered as (

    select
        signal_id,
        is_gate,
        severity,
        {{ render_thresholds('description') }} as description,
        {{ render_thresholds('what_to_check') }} as what_to_check,
        {{ render_thresholds('description_ko') }} as description_ko,
        {{ render_thresholds('what_to_check_ko') }} as what_to_check_ko

    from catalog

)

select * from rendered
