-- NULL-padded columns as ORDER BY keys (NULLS FIRST / LAST) and GROUP BY
-- keys (NULL is one group), and IS NOT NULL in a CASE.
select
	o_orderstatus,
	count(*) as n,
	count(o_orderkey) as orders,
	sum(case when o_orderkey is not null then 1 else 0 end) as matched,
	max(c_acctbal) as top_acctbal
from
	customer
	left join orders on c_custkey = o_custkey and o_orderdate < date '1992-06-01'
group by
	o_orderstatus
order by
	o_orderstatus nulls first
