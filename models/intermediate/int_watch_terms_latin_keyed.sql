{#- One row per ingredient watch term written in Latin script only: its salt word ids and the
    skeletons of its base (words that are no salt, hydrate or form word). A term has up to three
    skeletons: g read hard, g read soft, and a final -ate read as the acid (alendronate ->
    알렌드론산); "-ic acid" is read as 산 (tranexamic acid -> 트라넥삼산). The skeleton itself is
    the expression macro latin_words_skeleton (macros/transliteration.sql). -#}

with

watchlist as (

    select * from {{ ref('watchlist') }}

),

terms as (

    select distinct {{ display_text('term') }} as watch_term
    from watchlist
    where term_kind = 'ingredient'

),

latin_terms as (

    select watch_term
    from terms
    where {{ regex_matches('watch_term', '[A-Za-z]') }} and not {{ regex_matches('watch_term', '[가-힣]') }}

),

words as (

    select word_id, {{ text_lower('word') }} as word, word_kind
    from {{ ref('ingredient_name_translations') }}
    where script = 'latin'

),

{%- set latin_words = "trim(regexp_replace(" ~ text_lower('watch_term') ~ ", '[^a-z]+', ' ', 'g'))" %}

split as (

    select
        watch_term,
        {{ split_to_list(latin_words, "' '") }} as term_words,
        (select {{ list_agg('word') }} from words) as known_words

    from latin_terms

),

based as (

    select
        watch_term,
        term_words,
        regexp_replace(
            array_to_string({{ list_keep('term_words', 'w', 'not ' ~ list_has('known_words', 'w')) }}, ' '),
            '(ic|ous)? acid$', ' san'
        ) as base_text

    from split

),

salts as (

    select
        based.watch_term,
        {{ sorted_distinct_list_agg('words.word_id') }} as term_salts

    from based
    inner join words
        on words.word_kind = 'salt'
        and {{ list_has('based.term_words', 'words.word') }}
    group by based.watch_term

)

select
    based.watch_term,
    coalesce(salts.term_salts, {{ empty_list('varchar') }}) as term_salts,
    {{ distinct_list_of(
        [
            latin_words_skeleton('based.base_text'),
            latin_words_skeleton('based.base_text', soft_g=true),
            latin_words_skeleton("regexp_replace(based.base_text, 'ate$', ' san')"),
        ],
        's',
        "s is not null and length(replace(s, '.', '')) >= 3"
    ) }} as term_skeletons

from based
left join salts on based.watch_term = salts.watch_term
