-- COALESCE over a LEFT JOIN's NULLs, NULLIF making a value NULL.
select
	c_custkey,
	coalesce(sum(o_totalprice), 0) as total,
	coalesce(max(o_orderdate), date '1900-01-01') as last_order,
	nullif(c_nationkey, 3) as nation,
	count(nullif(o_orderstatus, 'F')) as not_final
from
	customer
	left join orders on c_custkey = o_custkey and o_orderdate < date '1992-08-01'
where
	c_custkey < 40
group by
	c_custkey,
	c_nationkey
order by
	c_custkey
