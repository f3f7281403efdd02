{#- The records of each load of the sequence that the diff must not read as received, and what
    it reads instead. A load may carry a few records the models cannot read; one of them must
    neither publish a false event nor stop every morning (SPEC §3):
      unreadable_text            a field stored escaped by the loader: bytes that are not UTF-8
                                 (CP949), a lone surrogate, a NUL; shown escaped it would be a
                                 mojibake CHANGED today and its undoing tomorrow;
      empty_record               every field empty: nothing identifies it;
      permit_no_on_several_rows  one registration number on several different rows of the load:
                                 a number is an identity only when it names one record, and two
                                 rows under it (a registration listed twice mid-update) would be a
                                 false NEW today and a false WITHDRAWN when one goes;
      listed_twice               the same record at the same places in both passes of the fetch
                                 (a stable duplicate): kept once, listed here.
    A held-out record is replaced by its registration's last good version: the record, not held
    out, of the latest earlier load of the sequence that one key names uniquely (its number when
    readable and unique, else its fallback key, else its loose key), so its registration keeps
    that version and gives no event; a record that names none (an empty record, a new number on
    two rows) is dropped until it is readable. Two held-out records never take the same version.
    int_load_items_quarantined lists these records (stg_mfds__load_items applies them, the signal
    records_quarantined lists them and the gate quarantine_share rejects a load that holds too
    many); this table adds one row per load screened (quarantine_kind null), so that it holds
    every load it classified, even one with nothing held out.

    Incremental (macros/incremental_loads.sql): a run classifies only the loads after the newest
    one held. A held-out record of a new load looks for its last good version among the earlier
    new loads of the run, and among the loads already held only through its keys: the records
    of those loads that one of its keys names, less those this table held out. A load leaving
    or moving in the sequence changes which load is earlier, so the pre-hook forgets it and
    every later load, and the run classifies them again. -#}

{#- without_jit: PostgreSQL multiplied its guesses of the CTEs into 127,936,253 rows for the
    result (1 there: the day's load, nothing held out) and JIT-compiled the query: 2.82 s of the
    2.96 s a morning's load took at day 20, 0.14 s without (EXPLAIN ANALYZE, issue 40). -#}
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    pre_hook=["{{ forget_loads_out_of_sequence() }}", "{{ without_jit() }}"],
) }}

{%- set watermark = incremental_load_watermark() %}

with

sequenced as (

    select load_id, load_seq from {{ ref('int_loads_sequenced') }}

),

memberships as (

    -- the loads this run classifies

    select
        items.load_id,
        items.as_of_date,
        items.item_position,
        items.repeat_count,
        items.row_hash,
        sequenced.load_seq

    from {{ ref('base_mfds__items') }} as items
    inner join sequenced
        on items.load_id = sequenced.load_id
    where sequenced.load_seq > {{ watermark }}
        and {{ load_id_of_loads_after(watermark, 'items.load_id') }}

),

versions as (

    select
        row_hash,
        permit_no,
        ingredient_name,
        applicant,
        permit_no_key,
        fallback_key,
        loose_key,
        unreadable_text,
        is_empty_record,
        starts_with(permit_no_raw, '␛') as permit_no_escaped

    from {{ ref('stg_mfds__item_versions') }}

),

records as (

    select
        {{ record_id('memberships.load_id', 'memberships.item_position') }} as record_id,
        memberships.*,
        versions.permit_no,
        versions.ingredient_name,
        versions.applicant,
        versions.permit_no_key,
        versions.fallback_key,
        versions.loose_key,
        versions.unreadable_text,
        versions.is_empty_record,
        versions.permit_no_escaped,
        count(*) over (partition by memberships.load_id, versions.permit_no_key) as rows_with_number

    from memberships
    inner join versions
        on memberships.row_hash = versions.row_hash

),

classified as (

    select
        *,
        case
            when unreadable_text is not null then 'unreadable_text'
            when is_empty_record then 'empty_record'
            when permit_no_key is not null and rows_with_number > 1 then 'permit_no_on_several_rows'
        end as held_out_kind

    from records

),

held_out as (

    select * from classified
    where held_out_kind is not null

),

new_good_records as (

    select * from classified
    where held_out_kind is null

),

held_out_keys as (

    select permit_no_key as key_value from held_out
    union
    select fallback_key from held_out
    union
    select loose_key from held_out

),

named_versions as (

    {#- the versions a key of a held-out record names: one semi-join per key, not one filter
        of three `or`-ed lists, which PostgreSQL cannot hash and tested row by row for every
        record of every held load (46 s for a 27-load catch-up, EXPLAIN ANALYZE, issue 40) -#}
    select row_hash, permit_no_key, fallback_key, loose_key from versions
    where permit_no_key in (select key_value from held_out_keys)

    union

    select row_hash, permit_no_key, fallback_key, loose_key from versions
    where fallback_key in (select key_value from held_out_keys)

    union

    select row_hash, permit_no_key, fallback_key, loose_key from versions
    where loose_key in (select key_value from held_out_keys)

),

held_good_records as (

    {#- the records of the loads already held that a key of a held-out record names (every
        one of them: a key naming two records of a load names none), less those held out -#}
    {%- if is_incremental() %}
    select
        {{ record_id('items.load_id', 'items.item_position') }} as record_id,
        items.load_id,
        items.row_hash,
        sequenced.load_seq,
        named_versions.permit_no_key,
        named_versions.fallback_key,
        named_versions.loose_key

    from {{ ref('base_mfds__items') }} as items
    inner join sequenced
        on items.load_id = sequenced.load_id
    inner join named_versions
        on items.row_hash = named_versions.row_hash
    where sequenced.load_seq <= {{ watermark }}
        and not exists (
            select 1 from {{ this }} as screened
            where screened.record_id = {{ record_id('items.load_id', 'items.item_position') }}
                and screened.quarantine_kind <> 'listed_twice'
        )
    {%- else %}
    select
        record_id, load_id, row_hash, load_seq, permit_no_key, fallback_key, loose_key
    from new_good_records
    where false
    {%- endif %}

),

good_records as (

    select record_id, load_id, row_hash, load_seq, permit_no_key, fallback_key, loose_key
    from new_good_records

    union all

    select record_id, load_id, row_hash, load_seq, permit_no_key, fallback_key, loose_key
    from held_good_records

),

candidates as (

    -- the earlier good records one key of a held-out record names, by key rank
    select held_out.record_id, 1 as key_rank, good_records.load_seq, good_records.record_id as source_record_id
    from held_out
    inner join good_records
        on held_out.permit_no_key = good_records.permit_no_key
        and held_out.load_seq > good_records.load_seq
    where held_out.held_out_kind = 'unreadable_text'
        and not held_out.permit_no_escaped

    union all

    select held_out.record_id, 2 as key_rank, good_records.load_seq, good_records.record_id as source_record_id
    from held_out
    inner join good_records
        on held_out.fallback_key = good_records.fallback_key
        and held_out.load_seq > good_records.load_seq
    where held_out.held_out_kind <> 'empty_record'

    union all

    select held_out.record_id, 3 as key_rank, good_records.load_seq, good_records.record_id as source_record_id
    from held_out
    inner join good_records
        on held_out.loose_key = good_records.loose_key
        and held_out.load_seq > good_records.load_seq
    where held_out.held_out_kind <> 'empty_record'

),

unique_candidates as (

    -- a key that names several records of that load names none
    select
        record_id,
        key_rank,
        load_seq,
        min(source_record_id) as source_record_id

    from candidates
    group by record_id, key_rank, load_seq
    having count(*) = 1

),

chosen as (

    select
        record_id,
        source_record_id,
        row_number() over (partition by record_id order by key_rank asc, load_seq desc) as choice

    from unique_candidates

),

replaced as (

    select
        held_out.*,
        chosen.source_record_id,
        good_records.load_id as source_load_id,
        good_records.row_hash as source_row_hash,
        -- two held-out records of one load never take the same version: the first listed does
        row_number() over (
            partition by held_out.load_id, chosen.source_record_id order by held_out.item_position
        ) as taker

    from held_out
    left join chosen
        on held_out.record_id = chosen.record_id
        and chosen.choice = 1
    left join good_records
        on chosen.source_record_id = good_records.record_id

),

quarantined as (

    select
        record_id,
        load_id,
        load_seq,
        as_of_date,
        item_position,
        row_hash as received_row_hash,
        held_out_kind as quarantine_kind,
        case held_out_kind
            when 'unreadable_text' then unreadable_text
            when 'empty_record' then '모든 필드가 빈 레코드'
            else '등록번호 ' || permit_no || ' 이(가) ' || cast(rows_with_number as varchar) || '개 행에 있음'
        end as quarantine_detail,
        permit_no,
        ingredient_name,
        applicant,
        case when source_record_id is not null and taker = 1 then source_row_hash end as replacement_row_hash,
        case when source_record_id is not null and taker = 1 then source_load_id end as replacement_load_id

    from replaced

    union all

    select
        record_id,
        load_id,
        load_seq,
        as_of_date,
        item_position,
        row_hash,
        'listed_twice',
        '같은 자리에 ' || cast(repeat_count as varchar) || '번 나열됨(한 번만 반영)',
        permit_no,
        ingredient_name,
        applicant,
        row_hash as kept_row_hash,
        load_id as kept_load_id

    from new_good_records
    where repeat_count > 1

),

screened_loads as (

    select distinct
        cast(null as varchar) as record_id,
        load_id,
        load_seq,
        as_of_date,
        cast(null as {{ dbt.type_bigint() }}) as item_position,
        cast(null as {{ dbt.type_bigint() }}) as received_row_hash,
        cast(null as varchar) as quarantine_kind,
        cast(null as varchar) as quarantine_detail,
        cast(null as varchar) as permit_no,
        cast(null as varchar) as ingredient_name,
        cast(null as varchar) as applicant,
        cast(null as {{ dbt.type_bigint() }}) as replacement_row_hash,
        cast(null as varchar) as replacement_load_id

    from memberships

)

select * from quarantined

union all

select * from screened_loads
