-- NOT LIKE with two wildcards and <>.
select count(*) as n
from supplier
where s_comment not like '%Customer%Complaints%' and s_nationkey <> 3
