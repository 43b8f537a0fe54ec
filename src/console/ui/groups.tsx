// Consumer groups: the list (state, members, lag), and one group's members, assignment, generation, per-partition
// offsets and lag with a chart, and the offset reset (dry-run preview, then confirmation).
import { useState } from 'preact/hooks'
import { get, post } from './api.js'
import { ago, num } from './format.js'
import { usePoll } from './poll.js'
import { href } from './route.js'
import type { PlannedReset } from '../actions.js'
import type { GroupDetail, GroupSummary } from '../groups.js'
import { Confirm, LagChart, Loading, Problem, Table, type Sample } from './widgets.js'

const WINDOW_MS = 5 * 60_000
/** lag samples per group, kept while the page is open (across navigation) */
const history = new Map<string, Sample[]>()

function record(group: string, lag: string): Sample[] {
  const now = Date.now()
  const samples = (history.get(group) ?? []).filter((s) => s.at > now - WINDOW_MS)
  samples.push({ at: now, value: Number(lag) })
  history.set(group, samples)
  return samples
}

const stateClass = (state: string) => (state === 'Stable' ? 'ok' : state === 'Empty' ? 'muted' : 'warn')

export function GroupsPage() {
  const { data, error } = usePoll(async () => {
    const r = await get<{ groups: GroupSummary[] }>('/groups')
    for (const g of r.groups) record(g.group, g.totalLag)
    return r
  }, [])
  return (
    <section>
      <h1>Consumer groups</h1>
      <Problem error={error} />
      {!data ? (
        <Loading />
      ) : (
        <Table label="Consumer groups" head={['Group', 'State', 'Members', 'Lag', 'Stuck ahead', 'Topics']}>
          {data.groups.map((g) => (
            <tr>
              <td>
                <a href={href('group', { id: g.group })}>{g.group}</a>
              </td>
              <td>
                <span class={`badge ${stateClass(g.state)}`}>{g.state}</span>
              </td>
              <td class="n">{g.members}</td>
              <td class="n">{num(g.totalLag)}</td>
              <td class="n">{g.stuckAhead > 0 ? <span class="badge warn">{g.stuckAhead}</span> : 0}</td>
              <td>{g.topics.join(', ')}</td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  )
}

export function GroupPage({ id, canAct }: { id: string; canAct: boolean }) {
  const [samples, setSamples] = useState<Sample[]>(history.get(id) ?? [])
  const { data, error, refresh } = usePoll(async () => {
    const d = await get<GroupDetail>('/group', { group: id })
    setSamples(record(id, d.lag.reduce((a, t) => a + BigInt(t.totalLag), 0n).toString()))
    return d
  }, [id])
  return (
    <section>
      <h1>
        Group <code>{id}</code>
      </h1>
      <Problem error={error} />
      {!data ? (
        <Loading />
      ) : (
        <>
          <p class="facts">
            <span class={`badge ${stateClass(data.state)}`}>{data.state}</span> · generation {data.generation ?? '–'} · protocol{' '}
            {data.protocol || '–'} · {data.members.length} members
          </p>
          <LagChart samples={samples} windowMs={WINDOW_MS} />
          <h2>Members</h2>
          {data.members.length === 0 ? (
            <p class="muted">No live members.</p>
          ) : (
            <Table label="Members" head={['Client id', 'Host', 'Last heartbeat', 'Assignment', 'Member id']}>
              {data.members.map((m) => (
                <tr>
                  <td>
                    {m.clientId}
                    {m.memberId === data.leaderId ? <span class="badge">leader</span> : null}
                  </td>
                  <td>{m.clientHost}</td>
                  <td>{ago(m.lastHeartbeatMs)}</td>
                  <td>
                    {Object.entries(m.assignment)
                      .map(([t, ps]) => `${t}: ${ps.join(', ')}`)
                      .join('; ') || '–'}
                  </td>
                  <td>
                    <code class="small">{m.memberId}</code>
                  </td>
                </tr>
              ))}
            </Table>
          )}
          <h2>Offsets and lag</h2>
          <Table label="Offsets and lag" head={['Topic', 'Partition', 'Committed', 'High', 'Lag', '']}>
            {data.lag.flatMap((t) =>
              (t.partitions ?? []).map((p) => (
                <tr>
                  <td>
                    <a href={href('topic', { name: t.topic })}>{t.topic}</a>
                  </td>
                  <td class="n">{p.partition}</td>
                  <td class="n">{num(p.offset)}</td>
                  <td class="n">{num(p.high)}</td>
                  <td class="n">{num(p.lag)}</td>
                  <td>
                    {p.metadata ? (
                      <span class="badge warn" title={`ahead by ${p.aheadBy}`}>
                        {p.metadata}
                      </span>
                    ) : null}
                  </td>
                </tr>
              )),
            )}
          </Table>
          {canAct && <ResetForm group={id} topics={data.lag.map((t) => t.topic)} onDone={refresh} />}
        </>
      )}
    </section>
  )
}

function ResetForm({ group, topics, onDone }: { group: string; topics: string[]; onDone: () => void }) {
  const [topic, setTopic] = useState(topics[0] ?? '')
  const [to, setTo] = useState('earliest')
  const [value, setValue] = useState('')
  const [plan, setPlan] = useState<PlannedReset[]>()
  const [confirming, setConfirming] = useState(false)
  const [status, setStatus] = useState<string>()
  const [error, setError] = useState<Error>()
  const body = (dryRun: boolean) => ({
    group,
    topic,
    to,
    dryRun,
    ...(to === 'timestamp' ? { timestamp: value } : {}),
    ...(to === 'offset' ? { offset: value } : {}),
  })
  const run = async (dryRun: boolean) => {
    setError(undefined)
    setStatus(undefined)
    try {
      const r = await post<{ partitions: PlannedReset[] }>('/reset-offsets', body(dryRun))
      setPlan(r.partitions)
      if (!dryRun) {
        setStatus(`Offsets of ${group} on ${topic} reset.`)
        setPlan(undefined)
        onDone()
      }
    } catch (err) {
      setError(err as Error)
    }
  }
  return (
    <form
      class="card"
      aria-labelledby="reset-title"
      onSubmit={(e) => {
        e.preventDefault()
        void run(true)
      }}
    >
      <h2 id="reset-title">Reset offsets</h2>
      <p class="muted">The group must have no running members (as with KafkaJS's admin.setOffsets).</p>
      <label>
        Topic <input list="reset-topics" required value={topic} onInput={(e) => (setTopic(e.currentTarget.value), setPlan(undefined))} />
        <datalist id="reset-topics">
          {topics.map((t) => (
            <option value={t} />
          ))}
        </datalist>
      </label>
      <label>
        To
        <select aria-label="To" value={to} onChange={(e) => (setTo(e.currentTarget.value), setPlan(undefined))}>
          <option value="earliest">earliest</option>
          <option value="latest">latest</option>
          <option value="timestamp">timestamp</option>
          <option value="offset">offset</option>
        </select>
      </label>
      {(to === 'timestamp' || to === 'offset') && (
        <label>
          {to === 'timestamp' ? 'Timestamp (ISO date or ms)' : 'Offset'}
          <input required value={value} onInput={(e) => (setValue(e.currentTarget.value), setPlan(undefined))} />
        </label>
      )}
      <button type="submit">Preview (dry run)</button>
      {plan && (
        <>
          <Table label="Reset preview" head={['Partition', 'Committed now', 'New offset', 'Low', 'High']}>
            {plan.map((p) => (
              <tr>
                <td class="n">{p.partition}</td>
                <td class="n">{p.current === null ? '–' : num(p.current)}</td>
                <td class="n">
                  <strong>{num(p.target)}</strong>
                </td>
                <td class="n">{num(p.low)}</td>
                <td class="n">{num(p.high)}</td>
              </tr>
            ))}
          </Table>
          <button type="button" class="danger" onClick={() => setConfirming(true)}>
            Apply reset…
          </button>
        </>
      )}
      <p class="status" aria-live="polite">
        {status}
      </p>
      <Problem error={error} />
      <Confirm
        open={confirming}
        title="Reset offsets?"
        confirm="Reset offsets"
        onCancel={() => setConfirming(false)}
        onConfirm={() => {
          setConfirming(false)
          void run(false)
        }}
      >
        <p>
          Group <code>{group}</code> will read topic <code>{topic}</code> from the new offsets shown ({to}).
        </p>
      </Confirm>
    </form>
  )
}
