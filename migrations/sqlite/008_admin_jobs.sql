-- The dashboard's background jobs, SQLite (admin_jobs.c): a bulk generate
-- is a row here, run by the sweeper's generate job in batches. done grows
-- in the same transaction as each batch's codes, so it is exact after a
-- crash. A runner holds a job while lease_until is ahead (the database's
-- clock) and renews it after every batch; a killed runner's job is taken
-- over when its lease runs out. state: queued -> running -> done|failed,
-- error holds the spec's word of a failed job.
CREATE TABLE admin_jobs (
	id INTEGER PRIMARY KEY,
	tenant_id INTEGER NOT NULL REFERENCES tenants(id),
	kind TEXT NOT NULL CHECK (kind IN ('generate')),
	campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
	total INTEGER NOT NULL CHECK (total >= 1),
	max_uses INTEGER NOT NULL CHECK (max_uses >= 1),
	expires_at INTEGER,
	done INTEGER NOT NULL DEFAULT 0 CHECK (done >= 0 AND done <= total),
	state TEXT NOT NULL DEFAULT 'queued'
	    CHECK (state IN ('queued', 'running', 'done', 'failed')),
	error TEXT NOT NULL DEFAULT '',
	admin_id INTEGER NOT NULL DEFAULT 0,
	lease_holder TEXT NOT NULL DEFAULT '',
	lease_until INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL,
	started_at INTEGER,
	updated_at INTEGER NOT NULL,
	finished_at INTEGER
);
CREATE INDEX admin_jobs_due ON admin_jobs (state, lease_until);
CREATE INDEX admin_jobs_tenant ON admin_jobs (tenant_id, id);
INSERT INTO sweep_leases (job) VALUES ('generate');
