{#- Incremental watchlist matching (model int_ingredient_names_matched): a name is matched once,
    and again only when what the match depends on changes. The model keeps, in every row, the
    fingerprint of those inputs; its pre-hook forgets the rows that no longer hold, and the model
    then matches every registry name the table does not hold. -#}

{% macro watch_matching_fingerprint() -%}
    {#- md5 of every row the matching reads besides the names themselves: the ingredient terms
        and approved aliases as the matcher sees them (int_watchlist_terms, which already folds
        in the watchlist, the aliases and the salt/translation words of the terms), the salt
        words that give a name its base (ingredient_salt_words), and the words and jamo that give
        a Hangul name its transliteration key (ingredient_name_translations,
        hangul_jamo_romanization). Rows are serialized column by column with a marker for null,
        ordered, and joined: any edit, addition or removal changes the value. A scalar subquery,
        so the pre-hook and the model compute the same value in the same way. -#}
    {%- set inputs = [
        ('terms', ref('int_watchlist_terms'), ['term_kind', 'watch_term', 'term_key', 'term_source', 'base_key', 'term_salts', 'term_skeletons'], "term_kind = 'ingredient'"),
        ('salt_words', ref('ingredient_salt_words'), ['word', 'position', 'word_kind'], none),
        ('translations', ref('ingredient_name_translations'), ['word_id', 'script', 'word', 'position', 'word_kind'], none),
        ('jamo', ref('hangul_jamo_romanization'), ['jamo_position', 'jamo_index', 'jamo', 'latin', 'skeleton'], none),
    ] -%}
    (
        select {{ dbt.hash(dbt.listagg('input_row', "';'", 'order by input_row')) }}
        from (
            {%- for label, relation, columns, condition in inputs %}
            {%- set cells = ["'" ~ label ~ "'"] %}
            {%- for column in columns %}{% do cells.append(watch_matching_cell(column)) %}{% endfor %}
            select {{ dbt.concat(cells) }} as input_row
            from {{ relation }}
            {%- if condition %}
            where {{ condition }}
            {%- endif %}
            {{ 'union all' if not loop.last }}
            {%- endfor %}
        ) as matching_inputs
    )
{%- endmacro %}


{% macro watch_matching_cell(column) -%}
    {#- One cell of a fingerprinted row: a separator, then the value as text, or a marker for
        null (so that null and '' differ). -#}
    '|' || coalesce(cast({{ column }} as {{ dbt.type_string() }}), '<null>')
{%- endmacro %}


{% macro forget_stale_watch_matches() -%}
    {#- Pre-hook of int_ingredient_names_matched, on incremental runs only: deletes every row
        matched under other inputs (the fingerprint differs: all of them once the watchlist,
        an alias or a salt/translation word changed) and the rows of names no longer in the
        registry (a load rejected after its build), so that the table holds exactly the rows a
        full refresh would; the model then matches every name it does not hold. -#}
    {%- if is_incremental() %}
    delete from {{ this }}
    where matching_fingerprint is distinct from {{ watch_matching_fingerprint() }}
        -- distinct: a few hundred names, where NOT IN over the key of every record of every
        -- load (4 million rows at day 410) cost DuckDB 0.3-0.8 s against 0.01 s
        or ingredient_name_key not in (
            select distinct ingredient_name_key
            from {{ ref('int_registrations_keyed') }}
            where ingredient_name_key is not null
        )
    {%- endif %}
{%- endmacro %}
