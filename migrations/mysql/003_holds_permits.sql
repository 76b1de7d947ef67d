-- Holds (seats of a code reserved for a TTL) and semaphores with permits,
-- MySQL/MariaDB. Times are Unix seconds by the server's clock. DDL
-- commits on its own here, hence IF NOT EXISTS throughout, and the one
-- ALTER (MySQL has no ADD COLUMN IF NOT EXISTS) comes last, so that a
-- run cut short before it can simply run again.

-- A hold takes a seat of the code (codes.uses counts live holds: G2), and
-- the campaign's budget and the account's per-campaign count when they
-- apply; confirm turns it into a redemption, release and expiry give all
-- of it back. Rows are kept (the cleanup job deletes old ended ones).
CREATE TABLE IF NOT EXISTS holds (
	id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	tenant_id BIGINT NOT NULL,
	external_id VARCHAR(128) NOT NULL,
	code_id BIGINT NOT NULL,
	campaign_id BIGINT NOT NULL,
	account VARCHAR(254) NOT NULL,
	state VARCHAR(10) NOT NULL DEFAULT 'held' CHECK (state IN
	    ('held', 'confirmed', 'released', 'expired')),
	fencing_token BIGINT NOT NULL CHECK (fencing_token >= 1),
	expires_at BIGINT NOT NULL,
	created_at BIGINT NOT NULL,
	ended_at BIGINT NULL,
	redemption_id BIGINT NULL,
	-- One live hold per account and code (a second would only lock a
	-- seat out): the account while held, NULL after, under a unique key.
	live_account VARCHAR(254) AS
	    (CASE WHEN state = 'held' THEN account END) VIRTUAL,
	UNIQUE KEY holds_external_id (tenant_id, external_id),
	UNIQUE KEY holds_live (code_id, live_account),
	KEY holds_due (state, expires_at),
	KEY holds_code (code_id, state),
	KEY holds_campaign_account (campaign_id, account, state),
	KEY holds_ended (ended_at),
	FOREIGN KEY (tenant_id) REFERENCES tenants(id),
	FOREIGN KEY (code_id) REFERENCES codes(id),
	FOREIGN KEY (campaign_id) REFERENCES campaigns(id),
	FOREIGN KEY (redemption_id) REFERENCES redemptions(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- A named capacity. in_use may exceed capacity only after capacity was
-- lowered (allowed: it admits nobody until enough permits are released).
CREATE TABLE IF NOT EXISTS semaphores (
	id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	tenant_id BIGINT NOT NULL,
	name VARCHAR(64) NOT NULL,
	capacity BIGINT NOT NULL CHECK (capacity >= 0),
	in_use BIGINT NOT NULL DEFAULT 0 CHECK (in_use >= 0),
	fence BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL,
	UNIQUE KEY semaphores_name (tenant_id, name),
	FOREIGN KEY (tenant_id) REFERENCES tenants(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Every capacity a semaphore was given: who, when, from (NULL: created)
-- and to.
CREATE TABLE IF NOT EXISTS semaphore_history (
	id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	semaphore_id BIGINT NOT NULL,
	who VARCHAR(254) NOT NULL,
	at BIGINT NOT NULL,
	from_capacity BIGINT NULL,
	to_capacity BIGINT NOT NULL,
	KEY semaphore_history_semaphore (semaphore_id, id),
	FOREIGN KEY (semaphore_id) REFERENCES semaphores(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- A permit: one grant over one or more semaphores, all or nothing. Its
-- fencing_token is that of its first semaphore in name order.
CREATE TABLE IF NOT EXISTS permits (
	id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	tenant_id BIGINT NOT NULL,
	external_id VARCHAR(128) NOT NULL,
	owner VARCHAR(254) NOT NULL,
	state VARCHAR(10) NOT NULL DEFAULT 'acquired' CHECK (state IN
	    ('acquired', 'released', 'expired')),
	fencing_token BIGINT NOT NULL CHECK (fencing_token >= 1),
	expires_at BIGINT NOT NULL,
	created_at BIGINT NOT NULL,
	ended_at BIGINT NULL,
	UNIQUE KEY permits_external_id (tenant_id, external_id),
	KEY permits_due (state, expires_at),
	KEY permits_ended (ended_at),
	FOREIGN KEY (tenant_id) REFERENCES tenants(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- What a permit took from each semaphore, with the semaphore's token and,
-- for verify (G5), its in_use right after the grant and its capacity then.
CREATE TABLE IF NOT EXISTS permit_items (
	permit_id BIGINT NOT NULL,
	semaphore_id BIGINT NOT NULL,
	count BIGINT NOT NULL CHECK (count >= 1),
	fencing_token BIGINT NOT NULL CHECK (fencing_token >= 1),
	in_use_after BIGINT NOT NULL,
	capacity_at BIGINT NOT NULL,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (permit_id, semaphore_id),
	KEY permit_items_semaphore (semaphore_id, fencing_token),
	FOREIGN KEY (permit_id) REFERENCES permits(id),
	FOREIGN KEY (semaphore_id) REFERENCES semaphores(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- The per-code fencing counter: bumped in the UPDATE that takes a hold's
-- seat, under the code's row lock, so tokens grow in grant order.
ALTER TABLE codes ADD COLUMN fence BIGINT NOT NULL DEFAULT 0;
