-- Each admin's time zone (an IANA name such as Europe/Berlin): the
-- dashboard shows times in it, with UTC on hover.
ALTER TABLE admins ADD COLUMN IF NOT EXISTS
    time_zone VARCHAR(64) NOT NULL DEFAULT 'UTC';
