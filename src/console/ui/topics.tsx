// Topics: the list with message counts, retention and the produce rate (from the change of the high watermarks
// between two polls), and one topic's partitions, settings and the test-message form.
import { useRef, useState } from 'preact/hooks'
import { get, post } from './api.js'
import { bytes, duration, num } from './format.js'
import { usePoll } from './poll.js'
import { href } from './route.js'
import { Loading, Problem, Table } from './widgets.js'
import type { Retention, TopicDetail, TopicSummary } from '../topics.js'

/** messages per second per topic, from the last two samples of its high watermark */
function useRates(topics: TopicSummary[] | undefined): Map<string, number> {
  const last = useRef(new Map<string, { at: number; high: bigint }>())
  const rates = useRef(new Map<string, number>())
  const seen = useRef<TopicSummary[] | undefined>(undefined)
  if (topics && topics !== seen.current) {
    seen.current = topics
    const at = performance.now()
    for (const t of topics) {
      const prev = last.current.get(t.name)
      const high = BigInt(t.high)
      if (prev && at > prev.at) rates.current.set(t.name, (Number(high - prev.high) * 1000) / (at - prev.at))
      last.current.set(t.name, { at, high })
    }
  }
  return rates.current
}

const rate = (r: number | undefined) => (r === undefined ? '…' : `${r.toFixed(r < 10 ? 1 : 0)}/s`)

export const retentionText = (r: Retention) =>
  [
    `age ${duration(r.maxAgeMs)}`,
    r.maxBytes === '-1' ? null : `bytes ${bytes(r.maxBytes)}`,
    r.maxRows === '0' ? null : `rows ${num(r.maxRows)}`,
    r.aggressive ? 'aggressive' : null,
  ]
    .filter(Boolean)
    .join(', ')

export function TopicsPage() {
  const { data, error } = usePoll(() => get<{ topics: TopicSummary[] }>('/topics'), [])
  const rates = useRates(data?.topics)
  const [filter, setFilter] = useState('')
  const shown = data?.topics.filter((t) => t.name.includes(filter))
  return (
    <section>
      <h1>Topics</h1>
      <Problem error={error} />
      <label class="filter">
        Filter <input type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
      </label>
      {!shown ? (
        <Loading />
      ) : (
        <Table label="Topics" head={['Topic', 'Partitions', 'Messages', 'Produce rate', 'Retention']}>
          {shown.map((t) => (
            <tr>
              <td>
                <a href={href('topic', { name: t.name })}>{t.name}</a>
              </td>
              <td class="n">{t.partitions}</td>
              <td class="n">{num(t.messages)}</td>
              <td class="n">{rate(rates.get(t.name))}</td>
              <td>{retentionText(t.retention)}</td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  )
}

export function TopicPage({ name, canAct }: { name: string; canAct: boolean }) {
  const { data, error, refresh } = usePoll(() => get<TopicDetail>('/topic', { topic: name }), [name])
  return (
    <section>
      <h1>
        Topic <code>{name}</code>
      </h1>
      <Problem error={error} />
      {!data ? (
        <Loading />
      ) : (
        <>
          <p class="facts">
            {data.partitions} partitions · {num(data.messages)} messages · {bytes(data.bytes)} · retention {retentionText(data.retention)}
          </p>
          <Table label="Partitions" head={['Partition', 'Low', 'High', 'Messages', 'Bytes', '']}>
            {data.partitionDetails.map((p) => (
              <tr>
                <td class="n">{p.partition}</td>
                <td class="n">{num(p.low)}</td>
                <td class="n">{num(p.high)}</td>
                <td class="n">{num(p.messages)}</td>
                <td class="n">{bytes(p.bytes)}</td>
                <td>
                  <a href={href('messages', { topic: name, partition: p.partition })}>Browse</a>
                </td>
              </tr>
            ))}
          </Table>
          <h2>Settings</h2>
          <Table label="Settings" head={['Name', 'Value', 'Source']}>
            {data.config.map((c) => (
              <tr>
                <td>
                  <code>{c.name}</code>
                </td>
                <td>{c.value}</td>
                <td>{c.explicit ? 'topic' : 'default'}</td>
              </tr>
            ))}
          </Table>
          {canAct && <ProduceForm topic={name} partitions={data.partitions} onSent={refresh} />}
        </>
      )}
    </section>
  )
}

function ProduceForm({ topic, partitions, onSent }: { topic: string; partitions: number; onSent: () => void }) {
  const [partition, setPartition] = useState('')
  const [key, setKey] = useState('')
  const [value, setValue] = useState('')
  const [result, setResult] = useState<string>()
  const [error, setError] = useState<Error>()
  const send = async (e: Event) => {
    e.preventDefault()
    setError(undefined)
    try {
      const r = await post<{ partition: number; offset: string }>('/produce', {
        topic,
        partition: partition === '' ? undefined : Number(partition),
        key: key || undefined,
        value,
      })
      setResult(`Sent to partition ${r.partition} at offset ${r.offset}`)
      onSent()
    } catch (err) {
      setError(err as Error)
    }
  }
  return (
    <form class="card" onSubmit={send} aria-labelledby="produce-title">
      <h2 id="produce-title">Produce a test message</h2>
      <label>
        Partition
        <select aria-label="Partition" value={partition} onChange={(e) => setPartition(e.currentTarget.value)}>
          <option value="">by key (or round robin)</option>
          {Array.from({ length: partitions }, (_, p) => (
            <option value={String(p)}>{p}</option>
          ))}
        </select>
      </label>
      <label>
        Key <input value={key} onInput={(e) => setKey(e.currentTarget.value)} />
      </label>
      <label>
        Value <textarea required rows={3} value={value} onInput={(e) => setValue(e.currentTarget.value)} />
      </label>
      <button type="submit">Send</button>
      <p class="status" aria-live="polite">
        {result}
      </p>
      <Problem error={error} />
    </form>
  )
}
