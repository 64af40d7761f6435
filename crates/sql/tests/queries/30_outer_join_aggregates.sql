-- SUM, AVG, MIN, MAX skip the NULLs of a LEFT JOIN's padded columns; a
-- group that saw none of their values gets NULL.
select
	c_custkey,
	count(o_orderkey) as orders,
	sum(o_totalprice) as total,
	avg(o_totalprice) as mean,
	min(o_orderdate) as first_order,
	max(o_totalprice) as biggest
from
	customer
	left join orders on c_custkey = o_custkey and o_orderdate < date '1993-01-01'
where
	c_custkey <= 50
group by
	c_custkey
order by
	c_custkey
