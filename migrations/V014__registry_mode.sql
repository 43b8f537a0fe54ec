-- Registry modes (Confluent's /mode): one row per subject with its own mode; the global mode is the row with
-- subject '' (no real subject can be empty). Missing global row = READWRITE.
CREATE TABLE IF NOT EXISTS __PGQUEUE_PREFIX___schema_mode (
    subject text PRIMARY KEY,
    mode text NOT NULL CHECK (mode IN ('READWRITE', 'READONLY', 'IMPORT')),
    updated_at timestamptz NOT NULL DEFAULT now()
);
