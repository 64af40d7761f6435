-- GROUP BY an expression (EXTRACT), ORDER BY its alias.
select extract(year from o_orderdate) as y, count(*) as orders, sum(o_totalprice) as total
from orders
group by extract(year from o_orderdate)
order by y
