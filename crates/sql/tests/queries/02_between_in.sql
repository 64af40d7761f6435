-- BETWEEN on an integer, IN on a dictionary string, ORDER BY + LIMIT.
select p_partkey, p_name, p_size, p_container
from part
where p_size between 10 and 12 and p_container in ('SM BOX', 'LG CASE')
order by p_partkey
limit 20
