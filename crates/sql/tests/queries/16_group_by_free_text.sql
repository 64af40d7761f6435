-- GROUP BY a free-text column after a join.
select s_name, count(*) as parts, sum(ps_supplycost * ps_availqty) as stock_value
from partsupp join supplier on ps_suppkey = s_suppkey
where s_suppkey <= 5
group by s_name
order by s_name
