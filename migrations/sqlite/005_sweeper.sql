-- The sweeper's leases: one row per job. A sweeper runs a job only while
-- it holds the job's lease (a conditional UPDATE), so two sweepers never
-- run the same job at once, and a killed sweeper's lease runs out.
CREATE TABLE sweep_leases (
	job TEXT PRIMARY KEY,
	holder TEXT NOT NULL DEFAULT '',
	expires_at INTEGER NOT NULL DEFAULT 0,
	last_run_at INTEGER,
	last_done INTEGER
);
INSERT INTO sweep_leases (job) VALUES ('expire'), ('release_leaked'),
    ('staleness'), ('deliver'), ('cleanup');
