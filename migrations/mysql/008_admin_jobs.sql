-- The dashboard's background jobs, MySQL/MariaDB (admin_jobs.c): a bulk
-- generate is a row here, run by the sweeper's generate job in batches.
-- done grows in the same transaction as each batch's codes, so it is
-- exact after a crash. A runner holds a job while lease_until is ahead
-- (the server's clock) and renews it after every batch; a killed runner's
-- job is taken over when its lease runs out. state: queued -> running ->
-- done|failed, error holds the spec's word of a failed job. DDL commits
-- on its own, hence IF NOT EXISTS and INSERT IGNORE.
CREATE TABLE IF NOT EXISTS admin_jobs (
	id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	tenant_id BIGINT NOT NULL,
	kind VARCHAR(16) NOT NULL,
	campaign_id BIGINT NOT NULL,
	total BIGINT NOT NULL,
	max_uses BIGINT NOT NULL,
	expires_at BIGINT NULL,
	done BIGINT NOT NULL DEFAULT 0,
	state VARCHAR(16) NOT NULL DEFAULT 'queued',
	error VARCHAR(32) NOT NULL DEFAULT '',
	admin_id BIGINT NOT NULL DEFAULT 0,
	lease_holder VARCHAR(128) NOT NULL DEFAULT '',
	lease_until BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL,
	started_at BIGINT NULL,
	updated_at BIGINT NOT NULL,
	finished_at BIGINT NULL,
	KEY admin_jobs_due (state, lease_until),
	KEY admin_jobs_tenant (tenant_id, id),
	CONSTRAINT admin_jobs_kind CHECK (kind IN ('generate')),
	CONSTRAINT admin_jobs_counts CHECK (total >= 1 AND max_uses >= 1
	    AND done >= 0 AND done <= total),
	CONSTRAINT admin_jobs_state
	    CHECK (state IN ('queued', 'running', 'done', 'failed')),
	FOREIGN KEY (tenant_id) REFERENCES tenants(id),
	FOREIGN KEY (campaign_id) REFERENCES campaigns(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
INSERT IGNORE INTO sweep_leases (job) VALUES ('generate');
