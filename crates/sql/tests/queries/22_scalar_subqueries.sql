-- Scalar subqueries: an uncorrelated one (a one-row cross product) and a
-- correlated one (its aggregate grouped by the correlation key and joined).
select
	p_partkey,
	p_name,
	p_retailprice
from
	part
where
	p_retailprice > (select avg(p_retailprice) * 1.2 from part)
	and p_size * 150 < (
		select min(ps_availqty) from partsupp where ps_partkey = p_partkey
	)
order by
	p_partkey
