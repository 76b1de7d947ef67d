-- Redeem schema, SQLite. Times are Unix seconds by the database clock.
CREATE TABLE tenants (
	id INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE,
	-- codes whose text fails the check character (imported or generated
	-- without one): while > 0 a failed check still looks the code up
	unchecked_codes INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL
);

CREATE TABLE counters (
	tenant_id INTEGER NOT NULL REFERENCES tenants(id),
	name TEXT NOT NULL,
	value INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (tenant_id, name)
);

CREATE TABLE campaigns (
	id INTEGER PRIMARY KEY,
	tenant_id INTEGER NOT NULL REFERENCES tenants(id),
	name TEXT NOT NULL,
	kind TEXT NOT NULL CHECK (kind IN ('shared', 'pool')),
	state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'closed')),
	starts_at INTEGER,
	ends_at INTEGER,
	budget INTEGER CHECK (budget IS NULL OR budget >= 1),
	redeemed INTEGER NOT NULL DEFAULT 0,
	per_account_limit INTEGER
	    CHECK (per_account_limit IS NULL OR per_account_limit >= 1),
	created_at INTEGER NOT NULL,
	closed_at INTEGER,
	UNIQUE (tenant_id, name),
	CHECK (redeemed >= 0 AND (budget IS NULL OR redeemed <= budget))
);

CREATE TABLE codes (
	id INTEGER PRIMARY KEY,
	tenant_id INTEGER NOT NULL REFERENCES tenants(id),
	campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
	code TEXT NOT NULL,		-- normalized: upper case, no spaces or dashes
	display TEXT NOT NULL,		-- as shown to people
	max_uses INTEGER NOT NULL CHECK (max_uses >= 1),
	uses INTEGER NOT NULL DEFAULT 0,
	state TEXT NOT NULL DEFAULT 'active' CHECK (state IN
	    ('active', 'redeemed', 'exhausted', 'expired', 'revoked')),
	expires_at INTEGER,
	created_at INTEGER NOT NULL,
	revoked_at INTEGER,
	UNIQUE (tenant_id, code),
	CHECK (uses >= 0 AND uses <= max_uses)
);
CREATE INDEX codes_campaign_state ON codes (campaign_id, state, id);
CREATE INDEX codes_expiry ON codes (state, expires_at);

CREATE TABLE redemptions (
	id INTEGER PRIMARY KEY,
	tenant_id INTEGER NOT NULL REFERENCES tenants(id),
	code_id INTEGER NOT NULL REFERENCES codes(id),
	campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
	account TEXT NOT NULL,
	seq INTEGER NOT NULL,
	redeemed_at INTEGER NOT NULL,
	reversed_at INTEGER,
	reversal_reason TEXT,
	reversal_policy TEXT
	    CHECK (reversal_policy IN ('return_seat', 'keep_seat')),
	UNIQUE (code_id, account),
	UNIQUE (tenant_id, seq)
);
CREATE INDEX redemptions_campaign_account ON redemptions (campaign_id, account);

-- The per-account limit of a campaign, claimed with a conditional UPDATE.
CREATE TABLE campaign_accounts (
	campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
	account TEXT NOT NULL,
	n INTEGER NOT NULL DEFAULT 0 CHECK (n >= 0),
	PRIMARY KEY (campaign_id, account)
);

-- The transactional outbox.
CREATE TABLE events (
	id INTEGER PRIMARY KEY,
	tenant_id INTEGER NOT NULL REFERENCES tenants(id),
	event_id TEXT NOT NULL UNIQUE,
	type TEXT NOT NULL,
	redemption_id INTEGER REFERENCES redemptions(id),
	created_at INTEGER NOT NULL,
	payload TEXT NOT NULL
);
CREATE INDEX events_redemption ON events (redemption_id, type);

-- Failed attempts for the abuse gate (kind 1: client key, 2: account).
CREATE TABLE abuse_failures (
	id INTEGER PRIMARY KEY,
	tenant_id INTEGER NOT NULL,
	kind INTEGER NOT NULL,
	subject TEXT NOT NULL,
	at INTEGER NOT NULL
);
CREATE INDEX abuse_failures_subject ON abuse_failures (tenant_id, kind, subject, at);

INSERT INTO tenants (name, created_at) VALUES ('default', UNIX_TIMESTAMP());
INSERT INTO counters (tenant_id, name, value)
    SELECT id, 'redemption_seq', 0 FROM tenants WHERE name = 'default';
