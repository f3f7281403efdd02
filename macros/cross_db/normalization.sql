{#- Text normalization that the engines spell differently: Unicode NFC, the sorted country
    list and the lenient ISO date (macros/text_normalization.sql uses them). -#}

{% macro nfc(column) -%}
    {#- Unicode NFC: a Hangul name sent decomposed (NFD: jamo by jamo) or an accented Latin name
        with combining marks looks the same to a reader as the composed one, and must compare and
        match the same. The raw layer keeps the text as received; values the loader stored
        escaped (not valid UTF-8) are ASCII after their marker, which NFC leaves alone. -#}
    {{ return(adapter.dispatch('nfc', 'dmf_watch')(column)) }}
{%- endmacro %}

{% macro duckdb__nfc(column) -%}
    nfc_normalize({{ column }})
{%- endmacro %}

{% macro default__nfc(column) -%}
    normalize({{ column }}, NFC)
{%- endmacro %}


{% macro country_list(column) -%}
    {#- Countries as a sorted list joined with ", ": one entry per manufacturing site, so a
        repeat (`스페인,스페인`: two Spanish sites) is kept, and only the order is normalized. -#}
    {{ return(adapter.dispatch('country_list', 'dmf_watch')(column)) }}
{%- endmacro %}


{% macro duckdb__country_list(column) -%}
    {#- DuckDB's list functions: a correlated subquery here made DuckDB compute the countries of
        every record of every load before a reader's filter on its loads applied (3.45 s against
        0.07 s for one load of stg_mfds__items at day 365; the same values on 394,232 records). -#}
    nullif(array_to_string(list_sort(list_filter(
        list_transform(string_split({{ display_text(column) }}, ','), lambda country: trim(country)),
        lambda country: country <> ''
    )), ', '), '')
{%- endmacro %}


{% macro default__country_list(column) -%}
    (
        select nullif(string_agg({{ trim_spaces('country') }}, ', ' order by {{ bytewise(trim_spaces('country')) }}), '')
        from unnest({{ split_to_list(display_text(column), "','") }}) as countries(country)
        where {{ trim_spaces('country') }} <> ''
    )
{%- endmacro %}


{% macro safe_iso_date(column) -%}
    {{ return(adapter.dispatch('safe_iso_date', 'dmf_watch')(column)) }}
{%- endmacro %}

{% macro duckdb__safe_iso_date(column) -%}
    cast(try_strptime({{ column }}, '%Y-%m-%d') as date)
{%- endmacro %}

{% macro default__safe_iso_date(column) -%}
    {#- What DuckDB's try_strptime(.., '%Y-%m-%d') accepts, on text already trimmed: a year of 1
        to 4 digits (0 is 1 BC), a month and a day of 1 or 2, a real day of the proleptic
        Gregorian calendar; null otherwise, never an error. Nested cases: PostgreSQL evaluates
        a case's branches in order, the operands of an and in any. -#}
    case
        when {{ column }} ~ '^[0-9]{1,4}-[0-9]{1,2}-[0-9]{1,2}$' then
            case
                when cast(split_part({{ column }}, '-', 2) as integer) between 1 and 12
                    and cast(split_part({{ column }}, '-', 3) as integer) between 1 and
                        case
                            when cast(split_part({{ column }}, '-', 2) as integer) = 2 then
                                case
                                    when cast(split_part({{ column }}, '-', 1) as integer) % 400 = 0
                                        or (cast(split_part({{ column }}, '-', 1) as integer) % 4 = 0
                                            and cast(split_part({{ column }}, '-', 1) as integer) % 100 <> 0)
                                        then 29
                                    else 28
                                end
                            when cast(split_part({{ column }}, '-', 2) as integer) in (4, 6, 9, 11) then 30
                            else 31
                        end
                    then make_date(
                        case
                            when cast(split_part({{ column }}, '-', 1) as integer) = 0 then -1
                            else cast(split_part({{ column }}, '-', 1) as integer)
                        end,
                        cast(split_part({{ column }}, '-', 2) as integer),
                        cast(split_part({{ column }}, '-', 3) as integer)
                    )
            end
    end
{%- endmacro %}
