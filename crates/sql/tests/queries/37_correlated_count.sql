-- A correlated COUNT: a nation without a matching supplier counts 0 (a LEFT
-- JOIN to the per-nation counts, COALESCE(count, 0)), not NULL.
select
	n_name,
	(n_nationkey + 1) * 0 as zero
from
	nation
where
	(
		select count(*) from supplier
		where s_nationkey = n_nationkey and s_acctbal > 8000
	) = 0
order by
	n_name
