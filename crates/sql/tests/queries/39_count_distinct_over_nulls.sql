-- COUNT(DISTINCT x) skips NULLs: per nation, the distinct prices and statuses
-- of the customers' late orders, the customers without one (NULLs after the
-- LEFT JOIN) counted out; a nation with no such order counts 0.
select
	c_nationkey,
	count(distinct o_totalprice) as prices,
	count(distinct o_orderstatus) as statuses,
	count(o_orderkey) as orders,
	count(*) as row_count
from
	customer
	left outer join orders on c_custkey = o_custkey and o_orderdate >= date '1998-07-25'
group by
	c_nationkey
order by
	c_nationkey
