-- The dashboard's sessions and audit log, MySQL/MariaDB. Times are Unix
-- seconds by the server's clock. DDL commits on its own here, hence IF
-- NOT EXISTS throughout (MariaDB's, on ALTER TABLE too).

-- One row per login. The cookie's token is never stored: only a hex
-- BLAKE2b-256 hash of it. csrf is the session's anti-forgery token, put
-- in every form. Idle and absolute timeouts are judged from last_seen_at
-- and created_at by the settings of the moment; ended_at is set by a
-- logout, a new login over this session, a password change or a disable.
CREATE TABLE IF NOT EXISTS admin_sessions (
	id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	tenant_id BIGINT NOT NULL,
	admin_id BIGINT NOT NULL,
	token_hash CHAR(64) NOT NULL,
	csrf CHAR(43) NOT NULL,
	ip VARCHAR(63) NOT NULL DEFAULT '',
	user_agent VARCHAR(255) NULL,
	created_at BIGINT NOT NULL,
	last_seen_at BIGINT NOT NULL,
	ended_at BIGINT NULL,
	UNIQUE KEY admin_sessions_token (token_hash),
	KEY admin_sessions_admin (admin_id, ended_at),
	FOREIGN KEY (tenant_id) REFERENCES tenants(id),
	FOREIGN KEY (admin_id) REFERENCES admins(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Append-only: who (admin_id, and the e-mail as it was then; 0 and '' for
-- the operator's tool or a failed login), from where, what, on which
-- object, when. Newest first by id, keyset paged. Text is cut to the
-- byte sizes below before it gets here.
CREATE TABLE IF NOT EXISTS audit_log (
	id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	tenant_id BIGINT NOT NULL,
	admin_id BIGINT NOT NULL DEFAULT 0,
	email VARCHAR(254) NOT NULL DEFAULT '',
	ip VARCHAR(63) NOT NULL DEFAULT '',
	action VARCHAR(63) NOT NULL,
	object VARCHAR(255) NOT NULL DEFAULT '',
	detail VARCHAR(511) NULL,
	at BIGINT NOT NULL,
	KEY audit_log_tenant (tenant_id, id),
	KEY audit_log_action (tenant_id, action, id),
	FOREIGN KEY (tenant_id) REFERENCES tenants(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- A disabled admin keeps its row (the audit log names it) but cannot log
-- in, and its sessions are ended. A login looks an e-mail up across
-- tenants (admins_login).
ALTER TABLE admins ADD COLUMN IF NOT EXISTS disabled_at BIGINT NULL,
    ADD KEY IF NOT EXISTS admins_login (email, id);
