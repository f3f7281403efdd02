{#- Arithmetic and number formatting as DuckDB does it. -#}

{% macro divide(numerator, denominator) -%}
    {#- A quotient as a double: DuckDB's / of two integers is a double, PostgreSQL's truncates. -#}
    {{ return(adapter.dispatch('divide', 'dmf_watch')(numerator, denominator)) }}
{%- endmacro %}

{% macro default__divide(numerator, denominator) -%}
    cast({{ numerator }} as double precision) / {{ denominator }}
{%- endmacro %}

{% macro duckdb__divide(numerator, denominator) -%}
    {{ numerator }} / {{ denominator }}
{%- endmacro %}


{% macro round_double(value, digits) -%}
    {#- A double rounded to `digits` decimals the way DuckDB does: the value times 10^digits
        rounded half away from zero, divided back (PostgreSQL's round(double) rounds half to
        even, and round(numeric, n) rounds the decimal text, not the double). -#}
    {{ return(adapter.dispatch('round_double', 'dmf_watch')(value, digits)) }}
{%- endmacro %}

{% macro default__round_double(value, digits) -%}
    (sign(cast({{ value }} as double precision)) * floor(abs(cast({{ value }} as double precision) * 1e{{ digits }}) + 0.5) / 1e{{ digits }})
{%- endmacro %}

{% macro duckdb__round_double(value, digits) -%}
    round({{ value }}, {{ digits }})
{%- endmacro %}


{% macro double_text(value) -%}
    {#- A double as text the way DuckDB writes it: the shortest decimal that reads back the same,
        with a '.0' on a whole number (PostgreSQL writes 100, DuckDB 100.0). -#}
    {{ return(adapter.dispatch('double_text', 'dmf_watch')(value)) }}
{%- endmacro %}

{% macro default__double_text(value) -%}
    (case
        when cast({{ value }} as double precision)::text ~ '^-?[0-9]+$'
            then cast({{ value }} as double precision)::text || '.0'
        else cast({{ value }} as double precision)::text
    end)
{%- endmacro %}

{% macro duckdb__double_text(value) -%}
    cast({{ value }} as varchar)
{%- endmacro %}
