-- CASE WHEN inside SUM.
select o_orderpriority,
       sum(case when o_totalprice > 200000 then 1 else 0 end) as big,
       count(*) as n
from orders
group by o_orderpriority
order by o_orderpriority
