{#- The watchlist as the matcher sees it: each term with its comparison key and, for
    ingredients, its base name (salt, hydrate, micronized and isomer words removed, as listed in
    the seed ingredient_salt_words), plus the approved aliases that stand for it (owned by the owner of that term). An ingredient
    term written in Latin script also gets its salt word ids and phonetic skeletons, for the
    transliteration stage (model int_watch_terms_latin_keyed). -#}

with

watchlist as (

    -- owner is optional: a watchlist written before it existed keeps working, owned by nobody
    select
        term_kind,
        term,
        {{ column_or_null(ref('watchlist'), 'owner') }}

    from {{ ref('watchlist') }}

),

aliases as (

    select * from {{ ref('ingredient_aliases') }}

),

terms as (

    select
        term_kind,
        {{ display_text('term') }} as watch_term,
        {{ comparison_key('term') }} as term_key,
        'term' as term_source,
        {{ display_text('owner') }} as owner

    from watchlist

    union all

    select
        'ingredient' as term_kind,
        {{ display_text('aliases.watch_term') }} as watch_term,
        {{ comparison_key('aliases.alias') }} as term_key,
        'alias' as term_source,
        {{ display_text('watchlist.owner') }} as owner

    from aliases
    left join watchlist
        on aliases.watch_term = watchlist.term

),

with_base as (

    select
        *,
        case when term_kind = 'ingredient' then {{ ingredient_base_name('term_key') }} end as base_key

    from terms

),

latin_keys as (

    select * from {{ ref('int_watch_terms_latin_keyed') }}

),

with_latin_keys as (

    select
        with_base.*,
        case when with_base.term_source = 'term' then latin_keys.term_salts end as term_salts,
        case when with_base.term_source = 'term' then latin_keys.term_skeletons end as term_skeletons

    from with_base
    left join latin_keys
        on with_base.term_kind = 'ingredient'
        and with_base.watch_term = latin_keys.watch_term

)

select * from with_latin_keys
