-- A hot code's seats split over several counter rows (issue 6). A code
-- with max_uses at or above REDEEM_SPLIT_MIN_USES gets `shards` rows here
-- at creation; a claim takes a seat from one picked at random (falling
-- back to the others), so claims on one code stop queueing on one row
-- lock. For a split code codes.uses stays 0: its uses are the sum of its
-- rows, and the rows' max_uses sum to the code's. G1 holds per row.
-- `active` goes to 0 on every row when the code is revoked: a claim
-- checks it on the row it locks, so a revoke waits for the claims in
-- flight and no claim passes after it.
ALTER TABLE codes ADD COLUMN shards INTEGER NOT NULL DEFAULT 0;
CREATE TABLE code_shards (
	code_id INTEGER NOT NULL REFERENCES codes(id),
	shard INTEGER NOT NULL,
	max_uses INTEGER NOT NULL CHECK (max_uses >= 1),
	uses INTEGER NOT NULL DEFAULT 0,
	active INTEGER NOT NULL DEFAULT 1,
	PRIMARY KEY (code_id, shard),
	CHECK (uses >= 0 AND uses <= max_uses)
) WITHOUT ROWID;
