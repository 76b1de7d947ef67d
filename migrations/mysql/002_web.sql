-- The web layer's tables, MySQL/MariaDB: API keys, dashboard admins and
-- the server-wide secrets the workers share (CSRF tokens, session
-- signing). DDL commits on its own here, hence IF NOT EXISTS throughout.

-- An API key is shown once; only its lookup id (public) and a BLAKE2b
-- hash of the whole key text are kept.
CREATE TABLE IF NOT EXISTS api_keys (
	id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	tenant_id BIGINT NOT NULL,
	lookup CHAR(8) NOT NULL,
	hash CHAR(64) NOT NULL,
	scope VARCHAR(8) NOT NULL CHECK (scope IN ('redeem', 'admin')),
	label VARCHAR(100) NOT NULL DEFAULT '',
	created_at BIGINT NOT NULL,
	revoked_at BIGINT NULL,
	UNIQUE KEY api_keys_lookup (lookup),
	KEY api_keys_tenant (tenant_id, id),
	FOREIGN KEY (tenant_id) REFERENCES tenants(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS admins (
	id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	tenant_id BIGINT NOT NULL,
	email VARCHAR(254) NOT NULL,
	role VARCHAR(8) NOT NULL CHECK (role IN ('owner', 'admin', 'viewer')),
	password_hash VARCHAR(255) NOT NULL,
	created_at BIGINT NOT NULL,
	UNIQUE KEY admins_email (tenant_id, email),
	FOREIGN KEY (tenant_id) REFERENCES tenants(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Created on first use with INSERT IGNORE, so every process reads the
-- same value.
CREATE TABLE IF NOT EXISTS server_secrets (
	name VARCHAR(64) NOT NULL PRIMARY KEY,
	value CHAR(64) NOT NULL,
	created_at BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
