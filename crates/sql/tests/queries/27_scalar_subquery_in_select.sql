-- Uncorrelated scalar subqueries in the SELECT list of a grouped query.
select
	n_regionkey,
	count(*) as nations,
	(select count(*) from region) as regions,
	count(*) * 100.0 / (select count(*) from nation) as pct
from
	nation
group by
	n_regionkey
order by
	n_regionkey
