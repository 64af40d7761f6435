-- ORDER BY strings DESC and an ordinal, a string compared with a literal.
select n_name, n_nationkey
from nation
where n_name >= 'I'
order by 1 desc
