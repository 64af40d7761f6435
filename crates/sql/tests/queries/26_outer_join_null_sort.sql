-- Sorting by a NULL-padded key in both directions: PostgreSQL puts NULLs
-- last ascending and first descending unless NULLS FIRST / LAST says.
select
	c_custkey,
	o_orderdate,
	o_totalprice
from
	customer
	left join orders on c_custkey = o_custkey and o_orderdate < date '1992-02-01'
where
	c_custkey < 300
order by
	o_totalprice desc nulls last,
	o_orderdate nulls first,
	c_custkey
limit 40
