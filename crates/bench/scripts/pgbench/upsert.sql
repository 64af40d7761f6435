-- An upsert per transaction (autocommit): a random account of twice the
-- loaded range, so about half the statements insert a new account and half
-- add to an existing one's balance through ON CONFLICT DO UPDATE.
\set aid random(1, 200000 * :scale)
\set delta random(-5000, 5000)
INSERT INTO pgbench_accounts (aid, bid, abalance, filler) VALUES (:aid, 1, :delta, '')
  ON CONFLICT (aid) DO UPDATE SET abalance = pgbench_accounts.abalance + excluded.abalance;
