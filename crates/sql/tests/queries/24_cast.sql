-- CAST between integers, decimals, doubles, strings and dates.
select
	n_name,
	cast(n_nationkey as decimal(10, 2)) * 1.5 as k,
	cast(n_regionkey as varchar) as r,
	cast('2020-02-03' as date) as d,
	cast(12.34 as decimal(10, 1)) as rounded,
	cast(n_nationkey as double) / 4 as q,
	cast(n_nationkey * 0.37 as integer) as truncated
from
	nation
where
	n_nationkey < 6
order by
	n_name
