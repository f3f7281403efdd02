{#- The Latin <-> Hangul key of every ingredient name of the registry (any load): Hangul base,
    salt word ids, romanization and phonetic skeleton (macro ingredient_name_keys; the
    algorithm is described in macros/transliteration.sql). -#}

{{ ingredient_name_keys(ref('int_registrations_keyed')) }}
