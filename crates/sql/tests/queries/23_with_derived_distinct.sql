-- WITH, a derived table with column aliases, SELECT DISTINCT, SUBSTRING.
with big (custkey, price) as (
	select o_custkey, o_totalprice from orders where o_totalprice > 350000
)
select distinct
	c_mktsegment,
	substring(c_phone from 1 for 2) as cc,
	sub.flag
from
	customer,
	big,
	(select n_nationkey as nk, n_regionkey * 10 as flag from nation) as sub
where
	c_custkey = custkey
	and c_nationkey = sub.nk
order by
	c_mktsegment,
	cc,
	sub.flag
