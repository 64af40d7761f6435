-- COUNT(DISTINCT …).
select o_orderstatus, count(distinct o_custkey) as customers
from orders
group by o_orderstatus
order by o_orderstatus
