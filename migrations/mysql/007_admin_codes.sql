-- The dashboard's codes list, MySQL/MariaDB: keyset pages by id within
-- a tenant, filtered by campaign or by state, each walk an index in id
-- order (no filesort) on a million codes. DDL commits on its own, hence
-- IF NOT EXISTS (MariaDB's).
CREATE INDEX IF NOT EXISTS codes_tenant_id ON codes (tenant_id, id);
CREATE INDEX IF NOT EXISTS codes_tenant_campaign
	ON codes (tenant_id, campaign_id, id);
CREATE INDEX IF NOT EXISTS codes_tenant_state ON codes (tenant_id, state, id);
