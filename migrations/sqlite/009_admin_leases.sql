-- The dashboard's leaked holds and permits, one tenant's at a time: its
-- holds and permits past their TTL, most overdue first, and its permits
-- acquired longer than the staleness limit, oldest first, each a range of
-- one index (the sweeper's own indexes have no tenant).
CREATE INDEX holds_tenant_due ON holds (tenant_id, state, expires_at);
CREATE INDEX permits_tenant_due ON permits (tenant_id, state, expires_at);
CREATE INDEX permits_tenant_stale ON permits (tenant_id, state, created_at);
