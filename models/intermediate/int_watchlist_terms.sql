{#- The watchlist as the matcher sees it: each term with its comparison key and, for
    ingredients, its base name (salt, hydrate, micronized and isomer words removed, as listed in
    the seed ingredient_salt_words), plus the approved aliases that stand for it. -#}

with

watchlist as (

    select * from {{ ref('watchlist') }}

),

aliases as (

    select * from {{ ref('ingredient_aliases') }}

),

terms as (

    select
        term_kind,
        {{ display_text('term') }} as watch_term,
        {{ comparison_key('term') }} as term_key,
        'term' as term_source

    from watchlist

    union all

    select
        'ingredient' as term_kind,
        {{ display_text('aliases.watch_term') }} as watch_term,
        {{ comparison_key('aliases.alias') }} as term_key,
        'alias' as term_source

    from aliases

),

with_base as (

    select
        *,
        case when term_kind = 'ingredient' then {{ ingredient_base_name('term_key') }} end as base_key

    from terms

)

select * from with_base
