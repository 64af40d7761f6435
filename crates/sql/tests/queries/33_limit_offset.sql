-- LIMIT with OFFSET over a sorted result (the sort keeps offset + limit rows).
select
	n_name,
	n_nationkey
from
	nation
order by
	n_name
limit 5 offset 3
