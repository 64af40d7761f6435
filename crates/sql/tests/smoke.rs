mod common;

#[test]
fn smoke() {
    for sql in [
        "select count(*) as n from lineitem",
        "select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty, sum(l_extendedprice * (1 - l_discount)) as s, avg(l_discount) as a, count(*) as c from lineitem where l_shipdate <= date '1998-12-01' - interval '90' day group by l_returnflag, l_linestatus order by l_returnflag, l_linestatus",
        "explain select n_name, r_name from nation join region on n_regionkey = r_regionkey where r_name = 'ASIA' order by n_name",
        "select n_name, r_name from nation join region on n_regionkey = r_regionkey where r_name = 'ASIA' order by n_name",
        "select c_name, count(*) as n from customer, orders where c_custkey = o_custkey group by c_name order by n desc, c_name limit 5",
    ] {
        match common::run_with(sql, "static") {
            Ok(maestro_sql::Output::Rows(r)) => println!("{}", r.to_table()),
            Ok(maestro_sql::Output::Explain(e)) => println!("{e}"),
            Err(e) => panic!("{sql}: {e}"),
        }
    }
}
