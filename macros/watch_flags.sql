{% macro watch_flags(records, terms, ingredient_matches) -%}
    {#- The watchlist flags of records, one row per record_id that some term matches: the
        matching rule the marts share (int_registrations_watched for the registry now and the
        events, int_registration_versions_watched for every version of the history), so a
        registration is flagged the same way whatever date it is read on. `records` names a
        relation or CTE with record_id and the comparison keys (ingredient_name_key,
        applicant_key, applicant_bizrno_key, manufacturer_key); `terms` one with the rows of
        int_watchlist_terms; `ingredient_matches` one with those of int_ingredient_watch_matches.
        A term matches by its ingredient match stage, the applicant's name or BIZRNO key, or a
        manufacturer name the manufacturer field contains; watch_matches says how each term
        matched and watch_owners who owns the matched terms. -#}
    select
        hits.record_id,
        string_agg(
            distinct {{ bytewise('hits.watch_term') }}, ', ' order by {{ bytewise('hits.watch_term') }}
        ) as watch_terms,
        string_agg(
            distinct {{ bytewise("hits.watch_term || ' (' || hits.match_stage || ')'") }}, ', '
            order by {{ bytewise("hits.watch_term || ' (' || hits.match_stage || ')'") }}
        ) as watch_matches,
        string_agg(
            distinct {{ bytewise('owners.owner') }}, ', ' order by {{ bytewise('owners.owner') }}
        ) as watch_owners

    from (

        select {{ records }}.record_id, {{ ingredient_matches }}.watch_term, {{ ingredient_matches }}.match_stage
        from {{ records }}
        inner join {{ ingredient_matches }}
            on {{ records }}.ingredient_name_key = {{ ingredient_matches }}.ingredient_name_key

        union all

        select {{ records }}.record_id, {{ terms }}.watch_term, 'applicant' as match_stage
        from {{ records }}
        inner join {{ terms }}
            on {{ terms }}.term_kind = 'applicant'
            and (
                {{ records }}.applicant_key = {{ terms }}.term_key
                or {{ records }}.applicant_bizrno_key = {{ terms }}.term_key
            )

        union all

        select {{ records }}.record_id, {{ terms }}.watch_term, 'manufacturer' as match_stage
        from {{ records }}
        inner join {{ terms }}
            on {{ terms }}.term_kind = 'manufacturer'
            and {{ dbt.position(terms ~ '.term_key', records ~ '.manufacturer_key') }} > 0

    ) as hits
    left join (

        select distinct
            watch_term,
            owner

        from {{ terms }}
        where owner is not null

    ) as owners
        on hits.watch_term = owners.watch_term
    group by hits.record_id
{%- endmacro %}
