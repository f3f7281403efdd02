{#- What a person needs to check a signal in five minutes, per load: the applicants and
    registration groups with the most events, and the spread of the events' permit dates. -#}

with

events as (

    select * from {{ ref('int_registration_events') }}

),

by_applicant as (

    select load_id, coalesce(applicant, '(없음)') as applicant, count(*) as events
    from events
    group by 1, 2

),

by_group as (

    select
        load_id,
        coalesce(permit_group || '-' || permit_class, '(번호 없음)') as registration_group,
        count(*) as events
    from events
    group by 1, 2

),

top_applicants as (

    select
        load_id,
        {{ json_top_pairs('applicant', 'events', 'events desc, ' ~ bytewise('applicant') ~ ' asc', 5) }}
            as top_applicants
    from by_applicant
    group by 1

),

top_groups as (

    select
        load_id,
        {{ json_top_pairs(
            'registration_group', 'events', 'events desc, ' ~ bytewise('registration_group') ~ ' asc', 5
        ) }}
            as top_groups
    from by_group
    group by 1

),

date_spread as (

    select
        load_id,
        {{ json_object_of([
            ('earliest', 'cast(min(permit_date) as varchar)', 'value'),
            ('latest', 'cast(max(permit_date) as varchar)', 'value'),
            ('distinct_dates', 'count(distinct permit_date)', 'value'),
            ('undated', 'count(*) - count(permit_date)', 'value'),
        ]) }} as date_spread
    from events
    group by 1

),

context as (

    select
        loads.load_id,
        {{ json_object_of([
            ('top_applicants', "coalesce(top_applicants.top_applicants, cast('[]' as json))", 'json'),
            ('top_groups', "coalesce(top_groups.top_groups, cast('[]' as json))", 'json'),
            ('date_spread', "coalesce(date_spread.date_spread, cast('{}' as json))", 'json'),
        ]) }} as context

    from {{ ref('int_loads_sequenced') }} as loads
    left join top_applicants on loads.load_id = top_applicants.load_id
    left join top_groups on loads.load_id = top_groups.load_id
    left join date_spread on loads.load_id = date_spread.load_id

)

select * from context
