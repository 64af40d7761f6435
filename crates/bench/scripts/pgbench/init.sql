-- pgbench's tables at scale 1 (pgbench -i's DDL less fillfactor; its data
-- comes from COPY, as pgbench -i loads it).
CREATE TABLE pgbench_branches (bid int PRIMARY KEY, bbalance int NOT NULL, filler char(88));
CREATE TABLE pgbench_tellers (tid int PRIMARY KEY, bid int NOT NULL, tbalance int NOT NULL, filler char(84));
CREATE TABLE pgbench_accounts (aid int PRIMARY KEY, bid int NOT NULL, abalance int NOT NULL, filler char(84));
CREATE TABLE pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, filler char(22));
INSERT INTO pgbench_branches VALUES (1, 0, '');
