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
    the expressions. The list expressions go through the cross-database macros of
    macros/cross_db/ (lists.sql), so the keys are the same on DuckDB and PostgreSQL; the
    similarity that ranks candidates is Jaro-Winkler on both (macros/cross_db/similarity.sql). -#}


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
    {{ latin_skeleton(list_transform_join(split_to_list(text, "' '"), 'w', "coalesce(" ~ per_word ~ ", '')", "''")) }}
{%- endmacro %}


{% macro transliteration_match(names, terms) -%}
    {#- A Hangul name matches a Latin term when its skeleton is one of the term's and it carries
        every salt the term names (a term without a salt covers every salt form). -#}
    ({{ list_has(terms ~ '.term_skeletons', names ~ '.name_skeleton') }}
        and {{ list_has_every(names ~ '.name_salts', terms ~ '.term_salts') }})
{%- endmacro %}


{% macro transliteration_similarity(names, terms) -%}
    {#- How plausible a Hangul name is for a Latin term, to rank the candidates offered to the
        AI: the best Jaro-Winkler similarity of the skeletons, plus a little for shared salts. -#}
    (
        coalesce({{ list_max_transform(
            terms ~ '.term_skeletons', 's', jaro_winkler('s', 'coalesce(' ~ names ~ ".name_skeleton, '')")
        ) }}, 0)
        + 0.05 * coalesce({{ list_intersection_size(names ~ '.name_salts', terms ~ '.term_salts') }}, 0)
    )
{%- endmacro %}
