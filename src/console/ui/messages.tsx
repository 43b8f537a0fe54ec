// The message browser: a partition from an offset or a timestamp, optionally one key; Avro values come decoded
// through the schema registry, the rest as JSON, text or hex.
import { useState } from 'preact/hooks'
import { get } from './api.js'
import { num, time } from './format.js'
import { usePoll } from './poll.js'
import { href } from './route.js'
import { Loading, Problem } from './widgets.js'
import type { BrowseResult, ShownValue } from '../messages.js'

const Value = ({ v, label, name }: { v: ShownValue; label: string; name: string }) => (
  <div class="value">
    <span class="field">{name}</span>
    <span class="badge">{v.format === 'avro' ? `avro #${v.schemaId}` : v.format}</span>
    {v.format === 'null' ? (
      <em>null</em>
    ) : (
      <pre aria-label={label}>
        {v.text}
        {v.truncated ? '…' : ''}
      </pre>
    )}
  </div>
)

export function MessagesPage({ params }: { params: URLSearchParams }) {
  const topic = params.get('topic') ?? ''
  const partition = params.get('partition') ?? '0'
  const offset = params.get('offset') ?? ''
  const timestamp = params.get('timestamp') ?? ''
  const key = params.get('key') ?? ''
  const [form, setForm] = useState({ topic, partition, offset, timestamp, key })
  // no live refresh here: a page of messages does not change, and the reader may be reading it
  const { data, error } = usePoll(
    () => (topic ? get<BrowseResult>('/messages', { topic, partition, offset, timestamp, key }) : Promise.resolve(undefined)),
    [topic, partition, offset, timestamp, key],
    0,
  )
  const field = (name: keyof typeof form) => ({
    value: form[name],
    onInput: (e: Event) => setForm({ ...form, [name]: (e.currentTarget as HTMLInputElement).value }),
  })
  return (
    <section>
      <h1>Messages</h1>
      <form
        class="card row"
        onSubmit={(e) => {
          e.preventDefault()
          location.hash = href('messages', form)
        }}
      >
        <label>
          Topic <input required {...field('topic')} />
        </label>
        <label>
          Partition <input inputMode="numeric" pattern="\d+" size={4} {...field('partition')} />
        </label>
        <label>
          From offset <input inputMode="numeric" pattern="\d*" size={8} {...field('offset')} />
        </label>
        <label>
          or timestamp <input placeholder="2026-12-01T12:00:00Z" size={20} {...field('timestamp')} />
        </label>
        <label>
          Key <input {...field('key')} />
        </label>
        <button type="submit">Browse</button>
      </form>
      <Problem error={error} />
      {topic && !data && !error && <Loading />}
      {data && (
        <>
          <p class="facts">
            <a href={href('topic', { name: data.topic })}>{data.topic}</a> partition {data.partition} · offsets {num(data.low)} to {num(data.high)} ·
            from {num(data.from)} · {data.messages.length} shown
          </p>
          <ol class="messages">
            {data.messages.map((m) => (
              <li>
                <div class="meta">
                  <strong>offset {num(m.offset)}</strong> · {time(m.timestamp)} · priority {m.priority} · {m.size} B
                </div>
                <Value name="key" v={m.key} label={`key at offset ${m.offset}`} />
                <Value name="value" v={m.value} label={`value at offset ${m.offset}`} />
                {Object.keys(m.headers).length > 0 && (
                  <dl class="headers">
                    {Object.entries(m.headers).map(([k, v]) => (
                      <>
                        <dt>{k}</dt>
                        <dd>{v.text}</dd>
                      </>
                    ))}
                  </dl>
                )}
              </li>
            ))}
          </ol>
          {data.next !== null && (
            <a class="button" href={href('messages', { topic, partition, offset: data.next, key })}>
              Next page
            </a>
          )}
        </>
      )}
    </section>
  )
}
