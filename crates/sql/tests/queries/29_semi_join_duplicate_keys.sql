-- [NOT] IN (SELECT ...) with keys repeated many times on both sides, the
-- left side smaller than the subquery's: each left row is kept (or dropped)
-- once; a computed key (a CAST) on the subquery side.
select
	p_size,
	count(*) as parts
from
	part
where
	p_size in (
		select cast(l_quantity as integer) from lineitem where l_returnflag = 'R'
	)
	and p_size not in (select l_linenumber from lineitem)
group by
	p_size
order by
	p_size
