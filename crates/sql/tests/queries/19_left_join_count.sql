-- LEFT [OUTER] JOIN: customers without a matching order are kept with NULLs;
-- COUNT(col) skips them, COUNT(*) does not, IS NULL finds them.
select
	c_custkey,
	count(o_orderkey) as orders,
	count(*) as row_count,
	sum(case when o_orderkey is null then 1 else 0 end) as unmatched,
	sum(case when o_totalprice is not null then 1 else 0 end) as priced
from
	customer
	left outer join orders on c_custkey = o_custkey and o_orderdate >= date '1998-01-01'
where
	c_custkey <= 60
group by
	c_custkey
order by
	c_custkey
