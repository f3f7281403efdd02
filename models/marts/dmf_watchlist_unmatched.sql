{#- Watched ingredient terms that no rule matched in the current registry, each with at most 8
    candidate ingredient names ranked by similarity: for a term in Latin script, of the
    transliteration keys (phonetic skeleton and salts: a Jaro-Winkler between Latin and Hangul
    letters would score 0 for every name); otherwise of the base names. This is the only input
    of the AI alias section: the AI may choose among these candidates and nothing else. -#}

with

terms as (

    select * from {{ ref('int_watchlist_terms') }}
    where term_kind = 'ingredient' and term_source = 'term'

),

current_names as (

    select distinct ingredient_name, ingredient_name_key
    from {{ ref('dmf_registrations') }}
    where ingredient_name_key is not null

),

matched_terms as (

    select distinct matches.watch_term
    from {{ ref('int_ingredient_watch_matches') }} as matches
    inner join current_names
        on matches.ingredient_name_key = current_names.ingredient_name_key

),

unmatched as (

    select * from terms
    where watch_term not in (select watch_term from matched_terms)

),

name_keys as (

    select * from {{ ref('int_ingredient_name_keys') }}

),

scored as (

    select
        unmatched.watch_term,
        current_names.ingredient_name,
        case
            when unmatched.term_skeletons is not null
                then {{ transliteration_similarity('name_keys', 'unmatched') }}
            else {{ name_similarity('unmatched.base_key', ingredient_base_name('current_names.ingredient_name_key')) }}
        end as similarity

    from unmatched
    cross join current_names
    left join name_keys
        on current_names.ingredient_name_key = name_keys.ingredient_name_key

),

ranked as (

    select
        *,
        row_number() over (
            partition by watch_term order by similarity desc, ingredient_name
        ) as candidate_rank

    from scored

),

candidates as (

    select
        unmatched.watch_term,
        unmatched.term_kind,
        to_json(
            list(ranked.ingredient_name order by ranked.candidate_rank)
                filter (where ranked.candidate_rank <= 8)
        ) as candidates

    from unmatched
    left join ranked
        on unmatched.watch_term = ranked.watch_term
    group by unmatched.watch_term, unmatched.term_kind

)

select
    (select max(as_of_date) from {{ ref('dmf_registrations') }}) as as_of_date,
    watch_term,
    term_kind,
    cast(coalesce(candidates, '[]'::json) as varchar) as candidates

from candidates
