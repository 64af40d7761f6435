-- NULL literals: in CASE branches (typed by the other branches), compared
-- (NULL, so only the other side of an OR decides), aggregated (skipped),
-- selected.
select
	n_regionkey,
	count(case when n_nationkey > 10 then n_name else null end) as late,
	sum(case when n_nationkey < 5 then null else n_nationkey end) as total,
	max(case when n_name like 'A%' then n_nationkey end) as a_key,
	null as nothing
from
	nation
where
	n_nationkey <> null
	or n_regionkey >= 1
group by
	n_regionkey
order by
	n_regionkey
