-- The highest version ever handed out per subject, so a permanently deleted version number is never handed out
-- again (Confluent never reuses one): a schema referencing (subject, version) keeps meaning the same schema.
CREATE TABLE IF NOT EXISTS __PGQUEUE_PREFIX___schema_subject (
    subject text PRIMARY KEY,
    last_version int NOT NULL CHECK (last_version >= 1)
);

INSERT INTO __PGQUEUE_PREFIX___schema_subject (subject, last_version)
SELECT v.subject, max(v.version) FROM __PGQUEUE_PREFIX___schema_version v GROUP BY v.subject
ON CONFLICT (subject) DO UPDATE SET last_version = GREATEST(__PGQUEUE_PREFIX___schema_subject.last_version, EXCLUDED.last_version);
