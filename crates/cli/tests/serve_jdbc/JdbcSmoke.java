// maestro serve through the PostgreSQL JDBC driver (pgJDBC), run by
// tests/serve.rs as a single-file program:
//
//     java -cp postgresql-42.7.14.jar JdbcSmoke.java PORT
//
// pgJDBC speaks the extended protocol only, and switches a statement to a
// named server-side prepared statement after 5 executions (prepareThreshold),
// so the loops below cross that switch. Exits non-zero on the first failed
// check, naming it.

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.Date;
import java.sql.Timestamp;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

public class JdbcSmoke {
    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    static long count(Connection c, String table) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("select count(*) from " + table)) {
            check(r.next(), "count(*) of " + table + " returns a row");
            return r.getLong(1);
        }
    }

    public static void main(String[] args) throws Exception {
        String url = "jdbc:postgresql://127.0.0.1:" + args[0] + "/maestro?user=maestro";
        try (Connection c = DriverManager.getConnection(url)) {
            try (Statement s = c.createStatement()) {
                s.execute("create table fruit (id integer, name varchar, price decimal(10,2), picked date)");
            }
            try (PreparedStatement ins = c.prepareStatement("insert into fruit values (?, ?, ?, ?)")) {
                for (int i = 1; i <= 8; i++) {
                    ins.setInt(1, i);
                    ins.setString(2, "fruit " + i);
                    ins.setBigDecimal(3, new BigDecimal(i + ".25"));
                    ins.setDate(4, Date.valueOf("2026-11-0" + i));
                    check(ins.executeUpdate() == 1, "insert " + i + " reports one row");
                }
            }
            try (PreparedStatement q = c.prepareStatement(
                    "select id, name, price, picked from fruit where id > ? order by id")) {
                for (int round = 0; round < 7; round++) {
                    q.setInt(1, 5);
                    try (ResultSet r = q.executeQuery()) {
                        int n = 0;
                        while (r.next()) {
                            int id = r.getInt(1);
                            check(id == 6 + n, "rows in order: got id " + id);
                            check(r.getString(2).equals("fruit " + id), "name of " + id);
                            check(r.getBigDecimal(3).compareTo(new BigDecimal(id + ".25")) == 0,
                                  "price of " + id + ": " + r.getBigDecimal(3));
                            check(r.getDate(4).toString().equals("2026-11-0" + id),
                                  "date of " + id + ": " + r.getDate(4));
                            n++;
                        }
                        check(n == 3, "three rows above 5, got " + n);
                    }
                }
            }
            // setTimestamp sends the JVM zone's offset ("… 10:00:00.5+01"): a
            // timestamp without time zone ignores it, as PostgreSQL does.
            try (Statement s = c.createStatement()) {
                s.execute("create table ev (id integer, ts timestamp)");
            }
            Timestamp at = Timestamp.valueOf("2026-11-01 10:00:00.5");
            try (PreparedStatement ins = c.prepareStatement("insert into ev values (?, ?)")) {
                ins.setInt(1, 1);
                ins.setTimestamp(2, at);
                check(ins.executeUpdate() == 1, "insert of a timestamp parameter");
            }
            try (PreparedStatement q = c.prepareStatement("select ts from ev where ts >= ?")) {
                q.setTimestamp(1, at);
                try (ResultSet r = q.executeQuery()) {
                    check(r.next(), "the timestamp row is found by a timestamp parameter");
                    check(r.getTimestamp(1).equals(at), "timestamp round trip: " + r.getTimestamp(1));
                }
            }
            // A transaction rolled back, then one committed.
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.executeUpdate("delete from fruit where id <= 4");
                check(count(c, "fruit") == 4, "the transaction sees its own delete");
                c.rollback();
                check(count(c, "fruit") == 8, "rollback restores the rows");
                s.executeUpdate("update fruit set price = price * 2 where id = 1");
                c.commit();
            }
            c.setAutoCommit(true);
            try (Statement s = c.createStatement();
                 ResultSet r = s.executeQuery("select price from fruit where id = 1")) {
                check(r.next() && r.getBigDecimal(1).compareTo(new BigDecimal("2.50")) == 0,
                      "the committed update is visible");
            }
            // Errors carry their SQLSTATE, and the session goes on.
            try (Statement s = c.createStatement()) {
                s.executeQuery("select 1 / 0");
                check(false, "division by zero raises an error");
            } catch (SQLException e) {
                check("22012".equals(e.getSQLState()), "SQLSTATE 22012, got " + e.getSQLState());
            }
            try (Statement s = c.createStatement()) {
                s.executeQuery("select * from nosuch");
                check(false, "an unknown table raises an error");
            } catch (SQLException e) {
                check("42P01".equals(e.getSQLState()), "SQLSTATE 42P01, got " + e.getSQLState());
            }
            // TPC-H loaded through CALL, then a query over it.
            try (Statement s = c.createStatement()) {
                s.execute("CALL maestro.load_tpch(0.01)");
            }
            check(count(c, "nation") == 25, "25 nations after load_tpch");
            try (PreparedStatement q = c.prepareStatement(
                    "select r_name, count(*) from nation, region where n_regionkey = r_regionkey "
                    + "and r_name like ? group by r_name order by r_name")) {
                q.setString(1, "A%");
                try (ResultSet r = q.executeQuery()) {
                    check(r.next() && r.getString(1).equals("AFRICA") && r.getLong(2) == 5, "AFRICA has 5 nations");
                    check(r.next() && r.getString(1).equals("AMERICA") && r.getLong(2) == 5, "AMERICA has 5 nations");
                    check(r.next() && r.getString(1).equals("ASIA") && r.getLong(2) == 5, "ASIA has 5 nations");
                    check(!r.next(), "three regions start with A");
                }
            }
        }
        System.out.println("jdbc: ok");
    }
}
