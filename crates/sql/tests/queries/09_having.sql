-- HAVING on an aggregate, ORDER BY the aggregate's alias.
select l_orderkey, sum(l_quantity) as qty
from lineitem
group by l_orderkey
having sum(l_quantity) > 300
order by qty desc, l_orderkey
