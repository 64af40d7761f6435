-- pgbench's builtin "simple-update" (-N) with its CURRENT_TIMESTAMP as a
-- literal, so builds without the clock functions run the same work.
\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, TIMESTAMP '2026-11-28 00:00:00');
END;
