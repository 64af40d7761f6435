-- MIN/MAX of dates.
select l_returnflag, min(l_shipdate) as first_ship, max(l_shipdate) as last_ship
from lineitem
group by l_returnflag
order by l_returnflag
