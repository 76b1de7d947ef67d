-- The dashboard's sessions and audit log, SQLite. Times are Unix seconds
-- by the database clock.

-- A disabled admin keeps its row (the audit log names it) but cannot log
-- in, and its sessions are ended. A login looks an e-mail up across
-- tenants (admins_login).
ALTER TABLE admins ADD COLUMN disabled_at INTEGER;
CREATE INDEX admins_login ON admins (email, id);

-- One row per login. The cookie's token is never stored: only a hex
-- BLAKE2b-256 hash of it. csrf is the session's anti-forgery token, put
-- in every form. Idle and absolute timeouts are judged from last_seen_at
-- and created_at by the settings of the moment; ended_at is set by a
-- logout, a new login over this session, a password change or a disable.
CREATE TABLE admin_sessions (
	id INTEGER PRIMARY KEY,
	tenant_id INTEGER NOT NULL REFERENCES tenants(id),
	admin_id INTEGER NOT NULL REFERENCES admins(id),
	token_hash TEXT NOT NULL UNIQUE,
	csrf TEXT NOT NULL,
	ip TEXT NOT NULL DEFAULT '',
	user_agent TEXT,
	created_at INTEGER NOT NULL,
	last_seen_at INTEGER NOT NULL,
	ended_at INTEGER
);
CREATE INDEX admin_sessions_admin ON admin_sessions (admin_id, ended_at);

-- Append-only: who (admin_id, and the e-mail as it was then; 0 and '' for
-- the operator's tool or a failed login), from where, what, on which
-- object, when. Newest first by id, keyset paged.
CREATE TABLE audit_log (
	id INTEGER PRIMARY KEY,
	tenant_id INTEGER NOT NULL REFERENCES tenants(id),
	admin_id INTEGER NOT NULL DEFAULT 0,
	email TEXT NOT NULL DEFAULT '',
	ip TEXT NOT NULL DEFAULT '',
	action TEXT NOT NULL,
	object TEXT NOT NULL DEFAULT '',
	detail TEXT,
	at INTEGER NOT NULL
);
CREATE INDEX audit_log_tenant ON audit_log (tenant_id, id);
CREATE INDEX audit_log_action ON audit_log (tenant_id, action, id);
