-- EXISTS / NOT EXISTS / IN / NOT IN (SELECT ...), correlated and not, as semi
-- and anti joins.
select
	s_suppkey,
	s_name
from
	supplier
where
	exists (
		select * from partsupp
		where ps_suppkey = s_suppkey and ps_availqty < 200
	)
	and s_nationkey not in (select n_nationkey from nation where n_regionkey = 1)
	and s_suppkey in (select l_suppkey from lineitem where l_quantity >= 50 and l_discount = 0.10)
	and not exists (
		select * from lineitem
		where l_suppkey = s_suppkey and l_shipmode = 'AIR' and l_quantity < 2
	)
order by
	s_suppkey
