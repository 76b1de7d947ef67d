-- The dashboard's codes list, SQLite: keyset pages by id within a
-- tenant, filtered by campaign or by state, each walk an index in id
-- order (no sort, no scan of other campaigns' codes) on a million codes.
CREATE INDEX codes_tenant_id ON codes (tenant_id, id);
CREATE INDEX codes_tenant_campaign ON codes (tenant_id, campaign_id, id);
CREATE INDEX codes_tenant_state ON codes (tenant_id, state, id);
