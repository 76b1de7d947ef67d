-- Redeem schema, MySQL/MariaDB (InnoDB, utf8mb4, binary collation so
-- normalized codes compare exactly). Times are Unix seconds by the
-- server's clock.
CREATE TABLE IF NOT EXISTS tenants (
	id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	name VARCHAR(64) NOT NULL,
	unchecked_codes BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL,
	UNIQUE KEY tenants_name (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS counters (
	tenant_id BIGINT NOT NULL,
	name VARCHAR(64) NOT NULL,
	value BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (tenant_id, name),
	FOREIGN KEY (tenant_id) REFERENCES tenants(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS campaigns (
	id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	tenant_id BIGINT NOT NULL,
	name VARCHAR(64) NOT NULL,
	kind VARCHAR(8) NOT NULL CHECK (kind IN ('shared', 'pool')),
	state VARCHAR(8) NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'closed')),
	starts_at BIGINT NULL,
	ends_at BIGINT NULL,
	budget BIGINT NULL CHECK (budget IS NULL OR budget >= 1),
	redeemed BIGINT NOT NULL DEFAULT 0,
	per_account_limit BIGINT NULL
	    CHECK (per_account_limit IS NULL OR per_account_limit >= 1),
	created_at BIGINT NOT NULL,
	closed_at BIGINT NULL,
	UNIQUE KEY campaigns_name (tenant_id, name),
	CONSTRAINT campaigns_budget
	    CHECK (redeemed >= 0 AND (budget IS NULL OR redeemed <= budget)),
	FOREIGN KEY (tenant_id) REFERENCES tenants(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS codes (
	id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	tenant_id BIGINT NOT NULL,
	campaign_id BIGINT NOT NULL,
	code VARCHAR(64) NOT NULL,
	display VARCHAR(96) NOT NULL,
	max_uses BIGINT NOT NULL CHECK (max_uses >= 1),
	uses BIGINT NOT NULL DEFAULT 0,
	state VARCHAR(10) NOT NULL DEFAULT 'active' CHECK (state IN
	    ('active', 'redeemed', 'exhausted', 'expired', 'revoked')),
	expires_at BIGINT NULL,
	created_at BIGINT NOT NULL,
	revoked_at BIGINT NULL,
	UNIQUE KEY codes_code (tenant_id, code),
	KEY codes_campaign_state (campaign_id, state, id),
	KEY codes_expiry (state, expires_at),
	CONSTRAINT codes_uses CHECK (uses >= 0 AND uses <= max_uses),
	FOREIGN KEY (tenant_id) REFERENCES tenants(id),
	FOREIGN KEY (campaign_id) REFERENCES campaigns(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS redemptions (
	id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	tenant_id BIGINT NOT NULL,
	code_id BIGINT NOT NULL,
	campaign_id BIGINT NOT NULL,
	account VARCHAR(254) NOT NULL,
	seq BIGINT NOT NULL,
	redeemed_at BIGINT NOT NULL,
	reversed_at BIGINT NULL,
	reversal_reason VARCHAR(500) NULL,
	reversal_policy VARCHAR(12) NULL
	    CHECK (reversal_policy IN ('return_seat', 'keep_seat')),
	UNIQUE KEY redemptions_code_account (code_id, account),
	UNIQUE KEY redemptions_seq (tenant_id, seq),
	KEY redemptions_campaign_account (campaign_id, account),
	FOREIGN KEY (tenant_id) REFERENCES tenants(id),
	FOREIGN KEY (code_id) REFERENCES codes(id),
	FOREIGN KEY (campaign_id) REFERENCES campaigns(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS campaign_accounts (
	campaign_id BIGINT NOT NULL,
	account VARCHAR(254) NOT NULL,
	n BIGINT NOT NULL DEFAULT 0 CHECK (n >= 0),
	PRIMARY KEY (campaign_id, account),
	FOREIGN KEY (campaign_id) REFERENCES campaigns(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS events (
	id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	tenant_id BIGINT NOT NULL,
	event_id VARCHAR(40) NOT NULL,
	type VARCHAR(40) NOT NULL,
	redemption_id BIGINT NULL,
	created_at BIGINT NOT NULL,
	payload MEDIUMTEXT NOT NULL,
	UNIQUE KEY events_event_id (event_id),
	KEY events_redemption (redemption_id, type),
	FOREIGN KEY (tenant_id) REFERENCES tenants(id),
	FOREIGN KEY (redemption_id) REFERENCES redemptions(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS abuse_failures (
	id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	tenant_id BIGINT NOT NULL,
	kind INT NOT NULL,
	subject VARCHAR(254) NOT NULL,
	at BIGINT NOT NULL,
	KEY abuse_failures_subject (tenant_id, kind, subject, at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

INSERT IGNORE INTO tenants (name, created_at) VALUES ('default', UNIX_TIMESTAMP());
INSERT IGNORE INTO counters (tenant_id, name, value)
    SELECT id, 'redemption_seq', 0 FROM tenants WHERE name = 'default';
