{% macro list_entry_diffs(changes, pair_keys) -%}
    {#- The entries a list field lost and gained between the two sides of a pair, for every row
        of `changes` (a CTE with the pair's key columns, field_name, before_value, after_value,
        before_key, after_key) whose list field changed substantively:
      1. split each side into pieces (list_pieces) and glue legal-form pieces back to the entry
         they end (list_piece_is_suffix), giving the entries in order;
      2. number repeated entries (two sites in one country), so entries compare as a multiset;
      3. an entry of the old value with no equal entry in the new one was removed, and the
         other way round added.
        One select per pair key (pair_keys, then field_name), with removed_entries and
        added_entries. The daily diff (int_field_changes: a load and the one before it) and the
        span diff (dmf_registration_version_changes: any two versions) both call it, so a field
        change is described the same way whatever the span. -#}
    {%- set keys = pair_keys | join(', ') -%}
    {%- set on_keys -%}
        {%- for key in pair_keys %}entries_counted.{{ key }} = other_side.{{ key }} and {% endfor -%}
    {%- endset %}
    with

    list_sides as (

        {%- for side, value in [('before', 'before_value'), ('after', 'after_value')] %}
        select
            {{ keys }},
            field_name,
            '{{ side }}' as side,
            {{ list_pieces(value, 'field_name') }} as pieces
        from {{ changes }}
        where field_name in ({{ "'" ~ list_fields() | join("', '") ~ "'" }})
            and before_key is distinct from after_key
        {{ "union all" if not loop.last }}
        {%- endfor %}

    ),

    list_pieces as (

        select
            {{ keys }},
            field_name,
            side,
            generate_subscripts(pieces, 1) as piece_position,
            unnest(pieces) as piece
        from list_sides

    ),

    pieces_numbered as (

        select
            *,
            sum(case when {{ list_piece_is_suffix('piece') }} then 0 else 1 end) over (
                partition by {{ keys }}, field_name, side
                order by piece_position
                rows between unbounded preceding and current row
            ) as entry_position
        from list_pieces

    ),

    entries as (

        select
            {{ keys }},
            field_name,
            side,
            entry_position,
            string_agg(piece, ',' order by piece_position) as entry
        from pieces_numbered
        group by {{ keys }}, field_name, side, entry_position

    ),

    entries_counted as (

        select
            *,
            row_number() over (
                partition by {{ keys }}, field_name, side, entry order by entry_position
            ) as occurrence
        from entries

    ),

    unmatched_entries as (

        select entries_counted.*
        from entries_counted
        left join entries_counted as other_side
            on {{ on_keys }}entries_counted.field_name = other_side.field_name
            and entries_counted.side <> other_side.side
            and entries_counted.entry = other_side.entry
            and entries_counted.occurrence = other_side.occurrence
        where other_side.entry is null

    )

    select
        {{ keys }},
        field_name,
        array_agg(entry order by entry_position) filter (where side = 'before') as removed_entries,
        array_agg(entry order by entry_position) filter (where side = 'after') as added_entries
    from unmatched_entries
    group by {{ keys }}, field_name
{%- endmacro %}


{% macro change_kind(before_key, after_key) -%}
    {#- cosmetic when the comparison keys are equal (the displayed values differ only in width,
        case, brackets or punctuation), else substantive. -#}
    case
        when ({{ before_key }} is not distinct from {{ after_key }}) then 'cosmetic'
        else 'substantive'
    end
{%- endmacro %}


{% macro change_detail(field_name, before_value, after_value, before_key, after_key, removed_entries, added_entries) -%}
    {#- What a field change did, for the severity rules' change_detail: a registration number
        assigned, removed or renumbered; a list field's entries added, removed, replaced (both)
        or reordered (neither, from list_entry_diffs); any other field modified. -#}
    case
        when ({{ before_key }} is not distinct from {{ after_key }}) then 'cosmetic'
        when {{ field_name }} = 'permit_no' and {{ before_value }} is null then 'assigned'
        when {{ field_name }} = 'permit_no' and {{ after_value }} is null then 'removed'
        when {{ field_name }} = 'permit_no' then 'renumbered'
        when {{ field_name }} not in ({{ "'" ~ list_fields() | join("', '") ~ "'" }})
            then 'modified'
        when {{ removed_entries }} is not null and {{ added_entries }} is not null
            then 'replaced'
        when {{ removed_entries }} is not null then 'removed'
        when {{ added_entries }} is not null then 'added'
        else 'reordered'
    end
{%- endmacro %}
