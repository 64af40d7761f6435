-- OR and NOT.
select count(*) as n
from lineitem
where (l_shipmode = 'AIR' or l_shipmode = 'MAIL') and not l_quantity < 30
