-- The sweeper's leases: one row per job. A sweeper runs a job only while
-- it holds the job's lease (a conditional UPDATE), so two sweepers never
-- run the same job at once, and a killed sweeper's lease runs out.
CREATE TABLE IF NOT EXISTS sweep_leases (
	job VARCHAR(32) NOT NULL PRIMARY KEY,
	holder VARCHAR(128) NOT NULL DEFAULT '',
	expires_at BIGINT NOT NULL DEFAULT 0,
	last_run_at BIGINT NULL,
	last_done BIGINT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
INSERT IGNORE INTO sweep_leases (job) VALUES ('expire'), ('release_leaked'),
    ('staleness'), ('deliver'), ('cleanup');
