-- Correlated scalar subqueries whose NULL (no group) is tested: in an OR,
-- with IS NULL, inside a CASE.
select
	n_name
from
	nation
where
	n_regionkey = 0
	or (
		select max(s_acctbal) from supplier
		where s_nationkey = n_nationkey and s_acctbal > 9000
	) is null
	or (case when (select min(s_suppkey) from supplier where s_nationkey = n_nationkey) > 50 then 1 else 0 end) = 1
order by
	n_name
