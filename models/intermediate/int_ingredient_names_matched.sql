{#- Which ingredient names of the registry (any load) a watchlist ingredient term covers, and
    how: stage 1 the exact key (or an approved alias), stage 2 the same base name, stage 3 one
    base name a prefix of the other with at most 2 characters more, stage 4 (terms in Latin
    script) the transliteration key: the same phonetic skeleton and every salt the term names
    (macro transliteration_match). Transliteration is not tried for a term with an approved
    alias: the person's decision stands. Each name keeps its best stage per term; a name no term
    covers keeps one row without a term, so that it counts as matched.

    Incremental: the matching works on distinct names, and only on the names the table does not
    hold yet. Every row carries the fingerprint of the matching's inputs (macro
    watch_matching_fingerprint); the pre-hook forgets the rows of another fingerprint (the
    watchlist, an alias or a salt/translation word changed: all names are matched again) and
    those of names gone from the registry, so an incremental run leaves exactly the rows of a
    full refresh. Downstream models read the view int_ingredient_watch_matches. -#}

{{ config(
    materialized='incremental',
    incremental_strategy='append',
    on_schema_change='fail',
    pre_hook="{{ forget_stale_watch_matches() }}",
) }}

with

registry_names as (

    select distinct ingredient_name_key
    from {{ ref('int_registrations_keyed') }}
    where ingredient_name_key is not null

),

names_to_match as (

    select * from registry_names
    {%- if is_incremental() %}
    where not exists (
        select 1 from {{ this }} as held
        where held.ingredient_name_key = registry_names.ingredient_name_key
    )
    {%- endif %}

),

names as (

    -- the base name after distinct: its regexes take a pattern from a seed, compiled per row
    select
        ingredient_name_key,
        {{ ingredient_base_name('ingredient_name_key') }} as base_key

    from names_to_match

),

terms as (

    select * from {{ ref('int_watchlist_terms') }}
    where term_kind = 'ingredient'

),

name_keys as (

    select name_keys.*
    from {{ ref('int_ingredient_name_keys') }} as name_keys
    inner join names_to_match
        on name_keys.ingredient_name_key = names_to_match.ingredient_name_key

),

latin_terms as (

    select * from terms
    where term_source = 'term'
        and term_skeletons is not null
        and watch_term not in (
            select alias_terms.watch_term
            from terms as alias_terms
            where alias_terms.term_source = 'alias'
        )

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

ranked_matches as (

    select
        *,
        row_number() over (
            partition by ingredient_name_key, watch_term
            order by case match_stage
                when 'exact' then 1 when 'alias' then 2 when 'base_name' then 3 when 'prefix' then 4 else 5
            end
        ) as match_rank

    from candidate_matches

),

best_matches as (

    select * from ranked_matches
    where match_rank = 1

),

fingerprint as (

    select {{ watch_matching_fingerprint() }} as matching_fingerprint

),

matched as (

    select
        names.ingredient_name_key,
        best_matches.watch_term,
        best_matches.match_stage,
        fingerprint.matching_fingerprint,
        -- the build that matched the name: an incremental build that finds no new name adds no row
        cast('{{ run_started_at.strftime("%Y-%m-%d %H:%M:%S.%f") }}' as {{ dbt.type_timestamp() }}) as matched_at

    from names
    cross join fingerprint
    left join best_matches
        on names.ingredient_name_key = best_matches.ingredient_name_key

)

select * from matched
