// The bulk fetch ships enqueued_at as a binary timestamp and turns it into milliseconds in the client (extract is
// numeric arithmetic on the server, a quarter of its time per fetched row): the result must be what the prepared
// fetch and offsetsByTimestamp compute in SQL, `(extract(epoch FROM ts) * 1000)::int8`, half milliseconds included.
import { describe, expect, it } from 'vitest'
import { timestamptzMs } from '../../../src/store/fetch.js'
import { useTestSchema } from '../../helpers/db.js'

const db = useTestSchema('fetch_timestamp')

describe('bulk fetch timestamps', () => {
  it('binary timestamptz to ms rounds as (extract(epoch FROM ts) * 1000)::int8 does', async () => {
    const stamps = [
      '2026-12-01 14:47:11.123456+00',
      '2026-12-01 14:47:11.1235+00',
      '2026-12-01 14:47:11.1225+00',
      '2026-12-01 14:47:11.1234995+00',
      '2026-12-01 14:47:11.999500+00',
      '2000-01-01 00:00:00+00',
      '1999-12-31 23:59:59.9995+00',
      '1970-01-01 00:00:00.0005+00',
      '1969-12-31 23:59:59.9995+00',
      '1969-12-31 23:59:59.9985+00',
      '1600-03-01 12:00:00.0005+00',
      '2600-03-01 12:00:00.0015+00',
      '2600-03-01 12:00:00.0025+00',
    ]
    // timestamptz_send is the binary form COPY (FORMAT binary) writes
    const res = await db.pool.query<{ binary: string; ms: string }>(
      `SELECT encode(timestamptz_send(ts), 'hex') AS binary, ((extract(epoch FROM ts) * 1000)::int8)::text AS ms
       FROM unnest($1::timestamptz[]) AS u(ts)`,
      [stamps],
    )
    const got = res.rows.map((r) => timestamptzMs(Buffer.from(r.binary, 'hex'), 0))
    expect(got).toEqual(res.rows.map((r) => r.ms))
    expect(got).toHaveLength(stamps.length)
  })
})
