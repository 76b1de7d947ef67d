-- Holds (seats of a code reserved for a TTL) and semaphores with permits,
-- SQLite. Times are Unix seconds by the database clock.

-- The per-code fencing counter: bumped in the UPDATE that takes a hold's
-- seat, under the code's row lock, so tokens grow in grant order.
ALTER TABLE codes ADD COLUMN fence INTEGER NOT NULL DEFAULT 0;

-- A hold takes a seat of the code (codes.uses counts live holds: G2), and
-- the campaign's budget and the account's per-campaign count when they
-- apply; confirm turns it into a redemption, release and expiry give all
-- of it back. Rows are kept (the cleanup job deletes old ended ones).
CREATE TABLE holds (
	id INTEGER PRIMARY KEY,
	tenant_id INTEGER NOT NULL REFERENCES tenants(id),
	external_id TEXT NOT NULL,	-- the client's idempotency key
	code_id INTEGER NOT NULL REFERENCES codes(id),
	campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
	account TEXT NOT NULL,		-- canonical
	state TEXT NOT NULL DEFAULT 'held' CHECK (state IN
	    ('held', 'confirmed', 'released', 'expired')),
	fencing_token INTEGER NOT NULL CHECK (fencing_token >= 1),
	expires_at INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	ended_at INTEGER,		-- when it left 'held'
	redemption_id INTEGER REFERENCES redemptions(id), -- confirmed
	UNIQUE (tenant_id, external_id)
);
CREATE INDEX holds_due ON holds (state, expires_at);
CREATE INDEX holds_code ON holds (code_id, state);
CREATE INDEX holds_campaign_account ON holds (campaign_id, account, state);
CREATE INDEX holds_ended ON holds (ended_at);
-- One live hold per account and code: a second would only lock a seat
-- out (G3 gives the account one redemption of the code).
CREATE UNIQUE INDEX holds_live ON holds (code_id, account)
    WHERE state = 'held';

-- A named capacity. in_use may exceed capacity only after capacity was
-- lowered (allowed: it admits nobody until enough permits are released).
CREATE TABLE semaphores (
	id INTEGER PRIMARY KEY,
	tenant_id INTEGER NOT NULL REFERENCES tenants(id),
	name TEXT NOT NULL,
	capacity INTEGER NOT NULL CHECK (capacity >= 0),
	in_use INTEGER NOT NULL DEFAULT 0 CHECK (in_use >= 0),
	fence INTEGER NOT NULL DEFAULT 0,	-- the fencing counter
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	UNIQUE (tenant_id, name)
);

-- Every capacity a semaphore was given: who, when, from (NULL: created)
-- and to.
CREATE TABLE semaphore_history (
	id INTEGER PRIMARY KEY,
	semaphore_id INTEGER NOT NULL REFERENCES semaphores(id),
	who TEXT NOT NULL,
	at INTEGER NOT NULL,
	from_capacity INTEGER,
	to_capacity INTEGER NOT NULL
);
CREATE INDEX semaphore_history_semaphore ON semaphore_history (semaphore_id, id);

-- A permit: one grant over one or more semaphores, all or nothing. Its
-- fencing_token is that of its first semaphore in name order.
CREATE TABLE permits (
	id INTEGER PRIMARY KEY,
	tenant_id INTEGER NOT NULL REFERENCES tenants(id),
	external_id TEXT NOT NULL,
	owner TEXT NOT NULL,
	state TEXT NOT NULL DEFAULT 'acquired' CHECK (state IN
	    ('acquired', 'released', 'expired')),
	fencing_token INTEGER NOT NULL CHECK (fencing_token >= 1),
	expires_at INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	ended_at INTEGER,
	UNIQUE (tenant_id, external_id)
);
CREATE INDEX permits_due ON permits (state, expires_at);
CREATE INDEX permits_ended ON permits (ended_at);

-- What a permit took from each semaphore, with the semaphore's token and,
-- for verify (G5), its in_use right after the grant and its capacity then.
CREATE TABLE permit_items (
	permit_id INTEGER NOT NULL REFERENCES permits(id),
	semaphore_id INTEGER NOT NULL REFERENCES semaphores(id),
	count INTEGER NOT NULL CHECK (count >= 1),
	fencing_token INTEGER NOT NULL CHECK (fencing_token >= 1),
	in_use_after INTEGER NOT NULL,
	capacity_at INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (permit_id, semaphore_id)
);
CREATE INDEX permit_items_semaphore ON permit_items (semaphore_id, fencing_token);
