-- The web layer's tables, SQLite: API keys, dashboard admins and the
-- server-wide secrets the workers share (CSRF tokens, session signing).

-- An API key is shown once; only its lookup id (public) and a BLAKE2b
-- hash of the whole key text are kept.
CREATE TABLE api_keys (
	id INTEGER PRIMARY KEY,
	tenant_id INTEGER NOT NULL REFERENCES tenants(id),
	lookup TEXT NOT NULL UNIQUE,
	hash TEXT NOT NULL,		-- hex BLAKE2b-256 of the key text
	scope TEXT NOT NULL CHECK (scope IN ('redeem', 'admin')),
	label TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	revoked_at INTEGER
);
CREATE INDEX api_keys_tenant ON api_keys (tenant_id, id);

CREATE TABLE admins (
	id INTEGER PRIMARY KEY,
	tenant_id INTEGER NOT NULL REFERENCES tenants(id),
	email TEXT NOT NULL,		-- canonical: trimmed, case-folded
	role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'viewer')),
	password_hash TEXT NOT NULL,	-- argon2id, crypto_pwhash_str
	created_at INTEGER NOT NULL,
	UNIQUE (tenant_id, email)
);

-- Created on first use with an insert that ignores a conflict, so every
-- process reads the same value.
CREATE TABLE server_secrets (
	name TEXT PRIMARY KEY,
	value TEXT NOT NULL,		-- hex of 32 random bytes
	created_at INTEGER NOT NULL
);
