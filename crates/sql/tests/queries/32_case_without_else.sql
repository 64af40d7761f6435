-- CASE without ELSE is NULL where no branch holds; COUNT, SUM, MIN and MAX
-- skip it, and a group where it never holds gets NULL.
select
	l_returnflag,
	count(case when l_quantity > 45 then 1 end) as big,
	sum(case when l_discount >= 0.09 then l_extendedprice end) as discounted,
	min(case when l_shipmode = 'AIR' then l_shipdate end) as first_air,
	max(case when l_quantity > 100 then l_quantity end) as never
from
	lineitem
group by
	l_returnflag
order by
	l_returnflag
