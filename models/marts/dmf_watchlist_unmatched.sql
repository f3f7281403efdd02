{#- Every watch term, of every kind, that matches no registration of the current registry, and
    why: the matching of int_registrations_watched (ingredient names as the ingredient match
    stages covered them; applicant by name or BIZRNO key; manufacturer key containing the term)
    is repeated on every version of dmf_registration_history, so a term can be told apart as
        never_matched       no version of any registration ever matched it (a typo, most often);
        all_withdrawn       it matched registrations once, and none of them is in the registry now;
        no_longer_matching  a registration it matched is still listed, but changed so that no
                            current version matches (a manufacturer replaced, an applicant renamed).
    The keys are computed on the distinct values of the history, not on every version.

    Unmatched ingredient terms also get at most 8 candidate ingredient names ranked by
    similarity: for a term in Latin script, of the transliteration keys (phonetic skeleton and
    salts: a Jaro-Winkler between Latin and Hangul letters would score 0 for every name);
    otherwise of the base names. This is the only input of the AI alias section: the AI may
    choose among these candidates and nothing else. Applicant and manufacturer terms get none
    (candidates is null): there is no alias for them to propose. -#}

with

watchlist_terms as (

    select * from {{ ref('int_watchlist_terms') }}
    where term_source = 'term'

),

terms as (

    -- one row per term even if the seed lists it twice
    select distinct term_kind, watch_term, term_key
    from watchlist_terms

),

versions as (

    select dmf_key, is_current, ingredient_name, applicant, applicant_bizrno, manufacturer
    from {{ ref('dmf_registration_history') }}

),

listed_registrations as (

    select distinct dmf_key
    from versions
    where is_current

),

ingredient_names as (

    select distinct ingredient_name from versions

),

ingredient_keys as (

    select
        ingredient_name,
        {{ comparison_key('ingredient_name') }} as ingredient_name_key

    from ingredient_names

),

applicants as (

    select distinct applicant from versions

),

applicant_keys as (

    select
        applicant,
        {{ comparison_key('applicant') }} as applicant_key

    from applicants

),

bizrnos as (

    select distinct applicant_bizrno from versions

),

bizrno_keys as (

    select
        applicant_bizrno,
        {{ comparison_key('applicant_bizrno') }} as applicant_bizrno_key

    from bizrnos

),

manufacturers as (

    select distinct manufacturer from versions

),

manufacturer_keys as (

    select
        manufacturer,
        {{ comparison_key('manufacturer') }} as manufacturer_key

    from manufacturers

),

ingredient_matches as (

    select * from {{ ref('int_ingredient_watch_matches') }}

),

matched_versions as (

    -- every (term, version) pair that matches, by the rules of int_registrations_watched
    select terms.term_kind, terms.watch_term, versions.dmf_key, versions.is_current
    from terms
    inner join ingredient_matches
        on terms.term_kind = 'ingredient'
        and terms.watch_term = ingredient_matches.watch_term
    inner join ingredient_keys
        on ingredient_matches.ingredient_name_key = ingredient_keys.ingredient_name_key
    inner join versions
        on ingredient_keys.ingredient_name = versions.ingredient_name

    union all

    select terms.term_kind, terms.watch_term, versions.dmf_key, versions.is_current
    from terms
    inner join applicant_keys
        on terms.term_kind = 'applicant'
        and terms.term_key = applicant_keys.applicant_key
    inner join versions
        on applicant_keys.applicant = versions.applicant

    union all

    select terms.term_kind, terms.watch_term, versions.dmf_key, versions.is_current
    from terms
    inner join bizrno_keys
        on terms.term_kind = 'applicant'
        and terms.term_key = bizrno_keys.applicant_bizrno_key
    inner join versions
        on bizrno_keys.applicant_bizrno = versions.applicant_bizrno

    union all

    select terms.term_kind, terms.watch_term, versions.dmf_key, versions.is_current
    from terms
    inner join manufacturer_keys
        on terms.term_kind = 'manufacturer'
        and {{ dbt.position('terms.term_key', 'manufacturer_keys.manufacturer_key') }} > 0
    inner join versions
        on manufacturer_keys.manufacturer = versions.manufacturer

),

term_history as (

    select
        terms.term_kind,
        terms.watch_term,
        count(matched_versions.dmf_key) > 0 as ever_matched,
        coalesce(bool_or(matched_versions.is_current), false) as matches_now,
        count(listed_registrations.dmf_key) > 0 as matched_one_still_listed

    from terms
    left join matched_versions
        on terms.term_kind = matched_versions.term_kind
        and terms.watch_term = matched_versions.watch_term
    left join listed_registrations
        on matched_versions.dmf_key = listed_registrations.dmf_key
    group by terms.term_kind, terms.watch_term

),

unmatched as (

    select
        term_kind,
        watch_term,
        case
            when not ever_matched then 'never_matched'
            when not matched_one_still_listed then 'all_withdrawn'
            else 'no_longer_matching'
        end as unmatched_reason

    from term_history
    where not matches_now

),

unmatched_ingredients as (

    select distinct watchlist_terms.*
    from watchlist_terms
    inner join unmatched
        on watchlist_terms.term_kind = unmatched.term_kind
        and watchlist_terms.watch_term = unmatched.watch_term
    where watchlist_terms.term_kind = 'ingredient'

),

current_names as (

    select distinct ingredient_name, ingredient_name_key
    from {{ ref('dmf_registrations') }}
    where ingredient_name_key is not null

),

name_keys as (

    select * from {{ ref('int_ingredient_name_keys') }}

),

scored as (

    select
        unmatched_ingredients.watch_term,
        current_names.ingredient_name,
        case
            when unmatched_ingredients.term_skeletons is not null
                then {{ transliteration_similarity('name_keys', 'unmatched_ingredients') }}
            else {{ name_similarity(
                'unmatched_ingredients.base_key', ingredient_base_name('current_names.ingredient_name_key')
            ) }}
        end as similarity

    from unmatched_ingredients
    cross join current_names
    left join name_keys
        on current_names.ingredient_name_key = name_keys.ingredient_name_key

),

ranked as (

    select
        *,
        row_number() over (
            partition by watch_term order by similarity desc, {{ bytewise('ingredient_name') }}
        ) as candidate_rank

    from scored

),

candidates as (

    select
        unmatched_ingredients.watch_term,
        {{ json_list_agg(
            'ranked.ingredient_name', 'ranked.candidate_rank', 'ranked.candidate_rank <= 8'
        ) }} as candidates

    from unmatched_ingredients
    left join ranked
        on unmatched_ingredients.watch_term = ranked.watch_term
    group by unmatched_ingredients.watch_term

)

select
    (select max(as_of_date) from {{ ref('dmf_registrations') }}) as as_of_date,
    unmatched.watch_term,
    unmatched.term_kind,
    unmatched.unmatched_reason,
    case
        when unmatched.term_kind = 'ingredient'
            then cast(coalesce(candidates.candidates, cast('[]' as json)) as varchar)
    end as candidates

from unmatched
left join candidates
    on unmatched.term_kind = 'ingredient'
    and unmatched.watch_term = candidates.watch_term
