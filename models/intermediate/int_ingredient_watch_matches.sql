{#- Which ingredient names of the registry (any load) a watchlist ingredient term covers, and
    how: stage 1 the exact key (or an approved alias), stage 2 the same base name, stage 3 one
    base name a prefix of the other with at most 2 characters more, stage 4 (terms in Latin
    script) the transliteration key: the same phonetic skeleton and every salt the term names
    (macro transliteration_match). Transliteration is not tried for a term with an approved
    alias: the person's decision stands. Each name keeps its best stage per term. -#}

with

names as (

    select distinct
        ingredient_name_key,
        {{ ingredient_base_name('ingredient_name_key') }} as base_key

    from {{ ref('int_registrations_keyed') }}
    where ingredient_name_key is not null

),

terms as (

    select * from {{ ref('int_watchlist_terms') }}
    where term_kind = 'ingredient'

),

name_keys as (

    select * from {{ ref('int_ingredient_name_keys') }}

),

latin_terms as (

    select * from terms
    where term_source = 'term'
        and term_skeletons is not null
        and watch_term not in (select watch_term from terms where term_source = 'alias')

),

candidate_matches as (

    select
        names.ingredient_name_key,
        terms.watch_term,
        case
            when names.ingredient_name_key = terms.term_key and terms.term_source = 'alias' then 'alias'
            when names.ingredient_name_key = terms.term_key then 'exact'
            when names.base_key = terms.base_key then 'base_name'
            else 'prefix'
        end as match_stage

    from names
    inner join terms
        on names.ingredient_name_key = terms.term_key
        or (length(terms.base_key) >= 2 and names.base_key = terms.base_key)
        or (
            length(terms.base_key) >= 2
            and length(names.base_key) >= 2
            and abs(length(names.base_key) - length(terms.base_key)) <= 2
            and (starts_with(names.base_key, terms.base_key) or starts_with(terms.base_key, names.base_key))
        )

    union all

    select
        name_keys.ingredient_name_key,
        latin_terms.watch_term,
        'transliteration' as match_stage

    from name_keys
    inner join latin_terms
        on {{ transliteration_match('name_keys', 'latin_terms') }}

),

best_match as (

    select
        *,
        row_number() over (
            partition by ingredient_name_key, watch_term
            order by case match_stage
                when 'exact' then 1 when 'alias' then 2 when 'base_name' then 3 when 'prefix' then 4 else 5
            end
        ) as match_rank

    from candidate_matches

)

select
    ingredient_name_key,
    watch_term,
    match_stage

from best_match
where match_rank = 1
