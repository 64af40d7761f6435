-- Column-to-column comparisons of dates; an expression compared with a constant.
select count(*) as late, sum(l_quantity) as qty
from lineitem
where l_commitdate < l_receiptdate
  and l_shipdate < l_commitdate
  and l_extendedprice * (1 - l_discount) > 50000.00
