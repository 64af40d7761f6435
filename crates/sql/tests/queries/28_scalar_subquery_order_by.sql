-- An uncorrelated scalar subquery in the SELECT list of an ungrouped query,
-- used by ORDER BY through its output name.
select
	r_name,
	r_regionkey - (select avg(n_regionkey) from nation) as offset_from_mean
from
	region
order by
	offset_from_mean desc,
	r_name
