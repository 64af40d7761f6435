-- Three-valued logic over NULL-padded columns: NOT (NULL > x) is NULL, which
-- WHERE rejects; NULL OR true is true. The ON condition on the right side
-- filters it before the join; the left side's rows all survive.
select
	count(*) as n,
	count(o_orderkey) as matched,
	count(distinct c_custkey) as customers
from
	customer
	left join orders on c_custkey = o_custkey and o_orderstatus = 'F'
where
	not (o_totalprice > 100000.00)
	or c_custkey < 30
