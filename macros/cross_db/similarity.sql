{#- String similarity to rank candidate names. DuckDB's jaro_winkler_similarity (rapidfuzz's
    Jaro-Winkler over the UTF-8 bytes, prefix weight 0.1 up to 4, applied above 0.7; 0 when a
    string is empty); PostgreSQL has none (pg_trgm's similarity ranks differently), so the
    on-run-start hook creates the same algorithm as a function, arithmetic in the same order. -#}

{% macro jaro_winkler(left, right) -%}
    {{ return(adapter.dispatch('jaro_winkler', 'dmf_watch')(left, right)) }}
{%- endmacro %}

{% macro duckdb__jaro_winkler(left, right) -%}
    jaro_winkler_similarity({{ left }}, {{ right }})
{%- endmacro %}

{% macro postgres__jaro_winkler(left, right) -%}
    {{ dmf_watch.engine_functions_schema() }}.dmf_jaro_winkler_similarity({{ left }}, {{ right }})
{%- endmacro %}


{% macro engine_functions_schema() -%}
    {#- Where the functions PostgreSQL lacks live: the target's own schema. -#}
    {{ return(target.schema) }}
{%- endmacro %}


{% macro create_engine_functions() -%}
    {#- on-run-start hook: the functions the project's SQL calls that the engine lacks. -#}
    {{ return(adapter.dispatch('create_engine_functions', 'dmf_watch')()) }}
{%- endmacro %}

{% macro default__create_engine_functions() -%}
    {{ return('') }}
{%- endmacro %}

{% macro postgres__create_engine_functions() -%}
    create schema if not exists {{ dmf_watch.engine_functions_schema() }};
    create or replace function {{ dmf_watch.engine_functions_schema() }}.dmf_jaro_winkler_similarity(p_text text, t_text text)
    returns double precision
    language plpgsql immutable strict parallel safe
    as $jaro$
    declare
        p integer[] := array(select ascii(c) from regexp_split_to_table(p_text, '') with ordinality as chars (c, n) order by n);
        t integer[] := array(select ascii(c) from regexp_split_to_table(t_text, '') with ordinality as chars (c, n) order by n);
        p_len integer := cardinality(p);
        t_len integer := cardinality(t);
        bound integer;
        p_flag boolean[];
        t_flag boolean[];
        common integer := 0;
        transpositions integer := 0;
        k integer := 0;
        lo integer;
        hi integer;
        sim double precision;
        prefix integer := 0;
    begin
        if p_text = '' or t_text = '' then
            return 0;
        end if;
        if p_len = 1 and t_len = 1 then
            return case when p[1] = t[1] then 1 else 0 end;
        end if;
        bound := greatest(p_len, t_len) / 2 - 1;
        p_flag := array_fill(false, array[p_len]);
        t_flag := array_fill(false, array[t_len]);
        for i in 0 .. p_len - 1 loop
            lo := greatest(0, i - bound);
            hi := least(t_len - 1, i + bound);
            for j in lo .. hi loop
                if not t_flag[j + 1] and p[i + 1] = t[j + 1] then
                    p_flag[i + 1] := true;
                    t_flag[j + 1] := true;
                    common := common + 1;
                    exit;
                end if;
            end loop;
        end loop;
        if common = 0 then
            return 0;
        end if;
        for i in 0 .. p_len - 1 loop
            if p_flag[i + 1] then
                while not t_flag[k + 1] loop
                    k := k + 1;
                end loop;
                if p[i + 1] <> t[k + 1] then
                    transpositions := transpositions + 1;
                end if;
                k := k + 1;
            end if;
        end loop;
        transpositions := transpositions / 2;
        sim := 0;
        sim := sim + common::double precision / p_len::double precision;
        sim := sim + common::double precision / t_len::double precision;
        sim := sim + (common::double precision - transpositions::double precision) / common::double precision;
        sim := sim / 3.0::double precision;
        if sim > 0.7::double precision then
            while prefix < least(p_len, t_len, 4) and p[prefix + 1] = t[prefix + 1] loop
                prefix := prefix + 1;
            end loop;
            sim := sim + prefix::double precision * 0.1::double precision * (1.0::double precision - sim);
        end if;
        return sim;
    end
    $jaro$
{%- endmacro %}
