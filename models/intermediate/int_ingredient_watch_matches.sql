{#- The watch matches downstream models read: the rows of int_ingredient_names_matched that name
    a term (the rows without a term only record that a name was matched and nothing covers it). -#}

{{ config(materialized='view') }}

with

names_matched as (

    select * from {{ ref('int_ingredient_names_matched') }}

),

matches as (

    select
        ingredient_name_key,
        watch_term,
        match_stage

    from names_matched
    where watch_term is not null

)

select * from matches
