-- Division of two exact sums (a DOUBLE).
select l_shipmode, sum(l_extendedprice * l_discount) / sum(l_extendedprice) as disc_ratio
from lineitem
group by l_shipmode
order by l_shipmode
