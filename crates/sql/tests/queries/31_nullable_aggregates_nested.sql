-- Aggregates over a derived table's NULL-able sums: IS NULL in WHERE, and
-- SUM/MIN/AVG skipping the NULLs.
select
	count(*) as customers,
	count(total) as with_orders,
	sum(total) as all_total,
	min(total) as least,
	avg(total) as mean
from
	(
		select c_custkey, sum(o_totalprice) as total
		from customer left join orders on c_custkey = o_custkey and o_orderdate < date '1992-03-01'
		group by c_custkey
	) as t
where
	total is null
	or total > 100000
