-- Consumer groups with a coordinator's guarantees but no coordinator (docs/decisions/006): a generation per group,
-- bumped by the group leader each time it writes a new assignment, and partition leases stamped with the
-- generation they were taken in, so fetches, commits and transactional offset commits can be fenced in SQL.

-- One row per group: the current generation, who computed it, with which assigner, for which members, and what
-- each member got (member id -> base64 of KafkaJS's MemberAssignment bytes).
CREATE TABLE IF NOT EXISTS __PGQUEUE_PREFIX___group_generation (
    consumer_group text PRIMARY KEY,
    generation bigint NOT NULL DEFAULT 0,
    leader_id text,
    protocol text,
    member_key text,
    assignment jsonb NOT NULL DEFAULT '{}',
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- What each member offers the leader: its assigners' names and protocol metadata ([{name, metadata base64}]).
ALTER TABLE __PGQUEUE_PREFIX___group_member
    ADD COLUMN IF NOT EXISTS protocols jsonb NOT NULL DEFAULT '[]';

-- generation: the group generation the holder took or last renewed the lease in. acquired_at: when the holder
-- took it (unchanged by renewals), so a member can tell a renewal from a re-acquisition after losing it.
ALTER TABLE __PGQUEUE_PREFIX___partition_lease
    ADD COLUMN IF NOT EXISTS generation bigint NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS acquired_at timestamptz NOT NULL DEFAULT now();
