{#- Latin <-> Hangul keys for ingredient names. RA staff keep ingredient lists in English; the
    registry writes names in Hangul. Both sides are reduced to a phonetic skeleton of consonant
    classes (P = p b f v, T = t d, K = k g c q, S = s z j ch, R = l r, M, N); a run of vowels
    becomes one '.', h is dropped, a class repeated without a vowel between is written once and
    a final vowel is dropped, so the usual loan-word spellings meet: v/b, f/p, l/r, -ine/-인, and
    the vowel ㅡ Korean inserts into consonant clusters (스, 르, 드) counts as no vowel. Salt, hydrate and form words are translated through
    seed ingredient_name_translations (analysts extend it) and compared as word ids, whether
    the Korean name puts the salt last (솔리페나신숙신산염) or first (숙신산솔리페나신).

    DuckDB only (lists, lambdas, list_has_all, unicode(), jaro_winkler_similarity): the entry macros
    (ingredient_name_keys, watch_term_latin_keys, transliteration_match, transliteration_similarity)
    dispatch to a duckdb__ implementation, and on any other adapter to a default__ that stops the
    compile with a clear error, until a port (e.g. postgres__ with arrays and pg_trgm) exists. The
    helpers latin_skeleton and latin_words_skeleton are only called from the duckdb__ macros. -#}


{% macro transliteration_not_supported(macro_name) -%}
    {{ exceptions.raise_compiler_error(
        "macro " ~ macro_name ~ " (Latin <-> Hangul transliteration, macros/transliteration.sql) is written for DuckDB only;"
        ~ " the adapter '" ~ adapter.type() ~ "' is not supported yet: add " ~ adapter.type() ~ "__" ~ macro_name
        ~ " beside duckdb__" ~ macro_name ~ ".") }}
{%- endmacro %}

{% macro latin_skeleton(column, soft_g=false) -%}
    {#- English orthography to the skeleton. Lower-case letters are read as English; upper-case
        letters and '.' are already skeleton (from Hangul) and pass through. With soft_g, g
        before e/i/y is read as j (gemcitabine 젬시타빈; the default reads it hard: 겐타마이신). -#}
    {%- set ns = namespace(expr="regexp_replace(" ~ column ~ ", '[^a-zA-Z.]', '', 'g')") -%}
    {%- set rules = [("ph", "f"), ("th", "t"), ("ch", "k"), ("sh", "s"), ("ck", "k"), ("qu", "k"), ("x", "ks")] -%}
    {%- if soft_g %}{% set rules = rules + [("g([eiy])", "j\\1")] %}{% endif -%}
    {%- set rules = rules + [("c([eiy])", "s\\1"), ("c", "k")] -%}
    {%- for pattern, replacement in rules -%}
        {%- set ns.expr = "regexp_replace(" ~ ns.expr ~ ", '" ~ pattern ~ "', '" ~ replacement ~ "', 'g')" -%}
    {%- endfor -%}
    {%- set ns.expr = "regexp_replace(translate(" ~ ns.expr ~ ", 'pbfvtdkgqszjlrmnaeiouyw', 'PPPPTTKKKSSSRRMN.......'), '[a-z]', '', 'g')" -%}
    {%- for cls in ["P", "T", "K", "S", "R", "M", "N"] -%}
        {%- set ns.expr = "regexp_replace(" ~ ns.expr ~ ", '" ~ cls ~ "+', '" ~ cls ~ "', 'g')" -%}
    {%- endfor -%}
    nullif(regexp_replace(regexp_replace({{ ns.expr }}, '[.]+', '.', 'g'), '[.]$', ''), '')
{%- endmacro %}


{% macro latin_words_skeleton(text, soft_g=false) -%}
    {#- The skeleton of a phrase, word by word: a word's final (often silent) vowel must not
        separate it from the next word (mycophenolate mofetil -> 미코페놀레이트모페틸). -#}
    {%- set per_word = latin_skeleton('w', soft_g) -%}
    {{ latin_skeleton("array_to_string(list_transform(string_split(" ~ text ~ ", ' '), lambda w: coalesce(" ~ per_word ~ ", '')), '')") }}
{%- endmacro %}


{% macro ingredient_name_keys(names_relation) -%}
    {{ return(adapter.dispatch('ingredient_name_keys', 'dmf_watch')(names_relation)) }}
{%- endmacro %}

{% macro default__ingredient_name_keys(names_relation) -%}
    {{ transliteration_not_supported('ingredient_name_keys') }}
{%- endmacro %}

{% macro duckdb__ingredient_name_keys(names_relation) -%}
    {#- One row per ingredient_name_key of `names_relation`: its Hangul base (salt, hydrate and
        form words removed from the end repeatedly and from the start once), the salt word ids
        it carries, its romanization and its skeleton (Hangul syllable arithmetic: a syllable
        is 0xAC00 + (lead * 21 + vowel) * 28 + tail; seed hangul_jamo_romanization maps each jamo). -#}
with

names as (

    select distinct ingredient_name_key
    from {{ names_relation }}
    where ingredient_name_key is not null

),

words as (

    select word_id, {{ comparison_key('word') }} as word_key, position, word_kind
    from {{ ref('ingredient_name_translations') }}
    where script = 'hangul'

),

jamo as (

    select * from {{ ref('hangul_jamo_romanization') }}

),

without_suffix as (

    select
        ingredient_name_key,
        regexp_replace(
            ingredient_name_key,
            (select '(' || string_agg(word_key, '|' order by length(word_key) desc) || ')+$'
             from words where position = 'suffix'),
            ''
        ) as head

    from names

),

without_prefix as (

    select
        ingredient_name_key,
        head,
        regexp_replace(
            head,
            (select '^(' || string_agg(word_key, '|' order by length(word_key) desc) || ')+'
             from words where position = 'prefix'),
            ''
        ) as core

    from without_suffix

),

based as (

    select
        ingredient_name_key,
        case when head = '' then ingredient_name_key when core = '' then head else core end as base_key,
        substr(ingredient_name_key, length(head) + 1) as suffix_part,
        case when core = '' then '' else left(head, length(head) - length(core)) end as prefix_part

    from without_prefix

),

salts as (

    select
        based.ingredient_name_key,
        list_sort(list_distinct(list(words.word_id))) as name_salts

    from based
    inner join words
        on words.word_kind = 'salt'
        and (
            (words.position = 'suffix' and contains(based.suffix_part, words.word_key))
            or (words.position = 'prefix' and contains(based.prefix_part, words.word_key))
        )
    group by based.ingredient_name_key

),

characters as (

    select
        ingredient_name_key,
        pos,
        substr(base_key, pos, 1) as ch,
        unicode(substr(base_key, pos, 1)) - 44032 as syllable

    from (
        select ingredient_name_key, base_key, unnest(generate_series(1, length(base_key))) as pos
        from based
    ) as positions

),

romanized as (

    select
        characters.ingredient_name_key,
        string_agg(
            case
                when characters.syllable between 0 and 11171
                    then coalesce(lead_jamo.skeleton, '') || coalesce(vowel_jamo.skeleton, '') || coalesce(tail_jamo.skeleton, '')
                else characters.ch
            end,
            '' order by characters.pos
        ) as skeleton_source,
        string_agg(
            case
                when characters.syllable between 0 and 11171
                    then coalesce(lead_jamo.latin, '') || coalesce(vowel_jamo.latin, '') || coalesce(tail_jamo.latin, '')
                else characters.ch
            end,
            '' order by characters.pos
        ) as name_latin

    from characters
    left join jamo as lead_jamo
        on lead_jamo.jamo_position = 'lead'
        and lead_jamo.jamo_index = cast(floor(characters.syllable / 588) as integer)
        and characters.syllable between 0 and 11171
    left join jamo as vowel_jamo
        on vowel_jamo.jamo_position = 'vowel'
        and vowel_jamo.jamo_index = cast(floor((characters.syllable % 588) / 28) as integer)
        and characters.syllable between 0 and 11171
    left join jamo as tail_jamo
        on tail_jamo.jamo_position = 'tail'
        and tail_jamo.jamo_index = characters.syllable % 28
        and characters.syllable between 0 and 11171
    group by characters.ingredient_name_key

)

select
    based.ingredient_name_key,
    based.base_key,
    coalesce(salts.name_salts, []) as name_salts,
    romanized.name_latin,
    {{ latin_skeleton('romanized.skeleton_source') }} as name_skeleton

from based
left join salts on based.ingredient_name_key = salts.ingredient_name_key
left join romanized on based.ingredient_name_key = romanized.ingredient_name_key
{%- endmacro %}


{% macro watch_term_latin_keys(terms_relation) -%}
    {{ return(adapter.dispatch('watch_term_latin_keys', 'dmf_watch')(terms_relation)) }}
{%- endmacro %}

{% macro default__watch_term_latin_keys(terms_relation) -%}
    {{ transliteration_not_supported('watch_term_latin_keys') }}
{%- endmacro %}

{% macro duckdb__watch_term_latin_keys(terms_relation) -%}
    {#- One row per watch_term of `terms_relation` written in Latin script only: its salt word
        ids and the skeletons of its base (words that are no salt, hydrate or form word). A term
        has up to three skeletons: g read hard, g read soft, and a final -ate read as the acid
        (alendronate -> 알렌드론산); "-ic acid" is read as 산 (tranexamic acid -> 트라넥삼산). -#}
with

terms as (

    select distinct watch_term
    from {{ terms_relation }}
    where regexp_matches(watch_term, '[A-Za-z]') and not regexp_matches(watch_term, '[가-힣]')

),

words as (

    select word_id, lower(word) as word, word_kind
    from {{ ref('ingredient_name_translations') }}
    where script = 'latin'

),

split as (

    select
        watch_term,
        string_split(trim(regexp_replace(lower(watch_term), '[^a-z]+', ' ', 'g')), ' ') as term_words,
        (select list(word) from words) as known_words

    from terms

),

based as (

    select
        watch_term,
        term_words,
        regexp_replace(
            array_to_string(
                list_filter(term_words, lambda w: not list_contains(known_words, w)),
                ' '
            ),
            '(ic|ous)? acid$', ' san'
        ) as base_text

    from split

),

salts as (

    select
        based.watch_term,
        list_sort(list_distinct(list(words.word_id))) as term_salts

    from based
    inner join words
        on words.word_kind = 'salt'
        and list_contains(based.term_words, words.word)
    group by based.watch_term

)

select
    based.watch_term,
    coalesce(salts.term_salts, []) as term_salts,
    list_distinct(list_filter([
        {{ latin_words_skeleton('based.base_text') }},
        {{ latin_words_skeleton('based.base_text', soft_g=true) }},
        {{ latin_words_skeleton("regexp_replace(based.base_text, 'ate$', ' san')") }}
    ], lambda s: s is not null and length(replace(s, '.', '')) >= 3)) as term_skeletons

from based
left join salts on based.watch_term = salts.watch_term
{%- endmacro %}


{% macro transliteration_match(names, terms) -%}
    {{ return(adapter.dispatch('transliteration_match', 'dmf_watch')(names, terms)) }}
{%- endmacro %}

{% macro default__transliteration_match(names, terms) -%}
    {{ transliteration_not_supported('transliteration_match') }}
{%- endmacro %}

{% macro duckdb__transliteration_match(names, terms) -%}
    {#- A Hangul name matches a Latin term when its skeleton is one of the term's and it carries
        every salt the term names (a term without a salt covers every salt form). -#}
    (list_contains({{ terms }}.term_skeletons, {{ names }}.name_skeleton)
        and list_has_all({{ names }}.name_salts, {{ terms }}.term_salts))
{%- endmacro %}


{% macro transliteration_similarity(names, terms) -%}
    {{ return(adapter.dispatch('transliteration_similarity', 'dmf_watch')(names, terms)) }}
{%- endmacro %}

{% macro default__transliteration_similarity(names, terms) -%}
    {{ transliteration_not_supported('transliteration_similarity') }}
{%- endmacro %}

{% macro duckdb__transliteration_similarity(names, terms) -%}
    {#- How plausible a Hangul name is for a Latin term, to rank the candidates offered to the
        AI: the best Jaro-Winkler similarity of the skeletons, plus a little for shared salts. -#}
    (
        coalesce(list_max(list_transform({{ terms }}.term_skeletons,
            lambda s: jaro_winkler_similarity(s, coalesce({{ names }}.name_skeleton, '')))), 0)
        + 0.05 * coalesce(len(list_intersect({{ names }}.name_salts, {{ terms }}.term_salts)), 0)
    )
{%- endmacro %}
