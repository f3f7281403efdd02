{#- The Latin <-> Hangul key of every ingredient name of the registry (any load): Hangul base,
    salt word ids, romanization and phonetic skeleton (the algorithm is described in
    macros/transliteration.sql, whose expression macros this model uses). One row per
    ingredient_name_key: its Hangul base (salt, hydrate and form words removed from the end
    repeatedly and from the start once), the salt word ids it carries, its romanization and its
    skeleton (Hangul syllable arithmetic: a syllable is 0xAC00 + (lead * 21 + vowel) * 28 + tail;
    seed hangul_jamo_romanization maps each jamo). -#}

{#- Without JIT on PostgreSQL: the romanization's joins are estimated at 343,000 rows for 1,960,
    so PostgreSQL compiled the plan: 0.13 s of the model's 0.20 s at day 6 (EXPLAIN ANALYZE,
    benchmarks/explain_models.py, issue 40). -#}
{{ config(pre_hook="{{ without_jit() }}") }}

with

names as (

    select distinct ingredient_name_key
    from {{ ref('int_registrations_keyed') }}
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
            (
                select '(' || string_agg(word_key, '|' order by length(word_key) desc) || ')+$'
                from words
                where position = 'suffix'
            ),
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
            (
                select '^(' || string_agg(word_key, '|' order by length(word_key) desc) || ')+'
                from words
                where position = 'prefix'
            ),
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
        {{ sorted_distinct_list_agg('words.word_id') }} as name_salts

    from based
    inner join words
        on words.word_kind = 'salt'
        and (
            (words.position = 'suffix' and {{ dbt.position('words.word_key', 'based.suffix_part') }} > 0)
            or (words.position = 'prefix' and {{ dbt.position('words.word_key', 'based.prefix_part') }} > 0)
        )
    group by based.ingredient_name_key

),

characters as (

    select
        ingredient_name_key,
        pos,
        substr(base_key, pos, 1) as ch,
        ascii(substr(base_key, pos, 1)) - 44032 as syllable

    from (
        select ingredient_name_key, base_key, {{ series_rows('1', 'length(base_key)') }} as pos
        from based
    ) as positions

),

romanized as (

    select
        characters.ingredient_name_key,
        string_agg(
            case
                when characters.syllable between 0 and 11171
                    then coalesce(lead_jamo.skeleton, '') || coalesce(vowel_jamo.skeleton, '')
                        || coalesce(tail_jamo.skeleton, '')
                else characters.ch
            end,
            '' order by characters.pos
        ) as skeleton_source,
        string_agg(
            case
                when characters.syllable between 0 and 11171
                    then coalesce(lead_jamo.latin, '') || coalesce(vowel_jamo.latin, '')
                        || coalesce(tail_jamo.latin, '')
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
    coalesce(salts.name_salts, {{ empty_list('varchar') }}) as name_salts,
    romanized.name_latin,
    {{ latin_skeleton('romanized.skeleton_source') }} as name_skeleton

from based
left join salts on based.ingredient_name_key = salts.ingredient_name_key
left join romanized on based.ingredient_name_key = romanized.ingredient_name_key
