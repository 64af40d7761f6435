-- JOIN … ON between two tables, grouped by a dictionary string.
select n_name, count(*) as suppliers, sum(s_acctbal) as acctbal
from supplier join nation on s_nationkey = n_nationkey
group by n_name
order by n_name
