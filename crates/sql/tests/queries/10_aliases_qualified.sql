-- Table aliases and qualified names.
select o.o_orderkey, c.c_name, o.o_totalprice
from orders o join customer c on o.o_custkey = c.c_custkey
where o.o_orderdate = date '1995-03-15'
order by o.o_totalprice desc, o.o_orderkey
limit 5
