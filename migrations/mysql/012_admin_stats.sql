-- The overview's and a campaign's numbers, MySQL/MariaDB. DDL commits on
-- its own, hence IF NOT EXISTS (MariaDB's).
--
-- Redemptions per day and top campaigns of the last 30 days: a range of
-- this index, covering (no table rows read), however many redemptions
-- the tenant has had before.
CREATE INDEX IF NOT EXISTS redemptions_tenant_time
	ON redemptions (tenant_id, redeemed_at, campaign_id);
-- Failing webhook endpoints: the tenant's retrying and dead deliveries
-- of the window, not every tenant's.
CREATE INDEX IF NOT EXISTS webhook_deliveries_tenant_state
	ON webhook_deliveries (tenant_id, state, last_attempt_at);
