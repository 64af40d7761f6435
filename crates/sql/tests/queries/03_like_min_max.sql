-- LIKE on free text, MIN/MAX of a decimal.
select count(*) as n, min(p_retailprice) as lo, max(p_retailprice) as hi
from part
where p_name like '%green%'
