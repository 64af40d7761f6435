-- Top-k: ORDER BY a decimal DESC with a tie-breaker, free-text output.
select c_custkey, c_name, c_acctbal
from customer
where c_mktsegment = 'BUILDING'
order by c_acctbal desc, c_custkey
limit 10
