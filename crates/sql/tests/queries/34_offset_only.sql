-- OFFSET without LIMIT, and a grouped, sorted input.
select
	n_regionkey,
	count(*) as nations
from
	nation
group by
	n_regionkey
order by
	n_regionkey desc
offset 2
