-- Three tables joined by WHERE equalities; AVG of a decimal is a DOUBLE.
select r_name, count(*) as customers, avg(c_acctbal) as avg_bal
from customer, nation, region
where c_nationkey = n_nationkey and n_regionkey = r_regionkey
group by r_name
order by r_name
