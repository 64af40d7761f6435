-- A count under a dictionary-string equality and a decimal comparison.
select count(*) as n
from orders
where o_orderstatus = 'F' and o_totalprice > 100000.00
