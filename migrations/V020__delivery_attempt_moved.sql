-- A message moved on by the dead-letter extension (to its dead-letter topic, or to the retry topic of its next
-- attempt) is marked moved in the move's own transaction: a later move of the same message by the same group (the
-- member rewound past a move whose outcome it did not learn, or a stalled member moving late) finds the mark and
-- aborts, so a message is moved once. A marked row is removed by maintenance ('sweep delivery attempts') once the
-- group's committed offset is past its message, like a failing row left by a member that died mid-retry.
ALTER TABLE __PGQUEUE_PREFIX___delivery_attempt ADD COLUMN IF NOT EXISTS moved_at timestamptz;
