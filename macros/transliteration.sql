{#- Latin <-> Hangul keys for ingredient names. RA staff keep ingredient lists in English; the
    registry writes names in Hangul. Both sides are reduced to a phonetic skeleton of consonant
    classes (P = p b f v, T = t d, K = k g c q, S = s z j ch, R = l r, M, N); a run of vowels
    becomes one '.', h is dropped, a class repeated without a vowel between is written once and
    a final vowel is dropped, so the usual loan-word spellings meet: v/b, f/p, l/r, -ine/-인, and
    the vowel ㅡ Korean inserts into consonant clusters (스, 르, 드) counts as no vowel. Salt, hydrate and form words are translated through
    seed ingredient_name_translations (analysts extend it) and compared as word ids, whether
    the Korean name puts the salt last (솔리페나신숙신산염) or first (숙신산솔리페나신).

    The two graphs live in models (int_ingredient_name_keys for the registry's names,
    int_watch_terms_latin_keyed for the watch terms), so dbt docs draws them; this file holds
    the expressions. DuckDB only (lists, lambdas, list_has_all, unicode(), jaro_winkler_similarity):
    transliteration_match and transliteration_similarity dispatch to a duckdb__ implementation and
    on any other adapter to a default__ that stops the compile with a clear error, and the two
    models stop theirs (duckdb_only), until a port (e.g. postgres__ with arrays and pg_trgm) exists. -#}


{% macro duckdb_only(model_name) -%}
    {#- Stops the compile of a model written for DuckDB only on any other adapter, naming it. -#}
    {%- if target.type != 'duckdb' -%}
    {{ exceptions.raise_compiler_error(
        "model " ~ model_name ~ " (Latin <-> Hangul transliteration) is written for DuckDB only;"
        ~ " the adapter '" ~ target.type ~ "' is not supported yet: port its list expressions to"
        ~ " dispatched macros (macros/transliteration.sql).") }}
    {%- endif -%}
{%- endmacro %}

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
