// The schema registry: subjects with versions and compatibility, one subject's versions and a diff of two.
import { useState } from 'preact/hooks'
import { get } from './api.js'
import { lineDiff } from './diff.js'
import { usePoll } from './poll.js'
import { href } from './route.js'
import { Loading, Problem, Table } from './widgets.js'
import type { SubjectDetail, SubjectSummary } from '../schemas.js'

export function SchemasPage() {
  const { data, error } = usePoll(() => get<{ subjects: SubjectSummary[] }>('/subjects'), [], 10_000)
  return (
    <section>
      <h1>Schema registry</h1>
      <Problem error={error} />
      {!data ? (
        <Loading />
      ) : data.subjects.length === 0 ? (
        <p class="muted">No subjects registered.</p>
      ) : (
        <Table label="Subjects" head={['Subject', 'Versions', 'Latest id', 'Type', 'Compatibility']}>
          {data.subjects.map((s) => (
            <tr>
              <td>
                <a href={href('schema', { subject: s.subject })}>{s.subject}</a>
              </td>
              <td>{s.versions.join(', ')}</td>
              <td class="n">{s.latestId}</td>
              <td>{s.schemaType}</td>
              <td>{s.compatibility}</td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  )
}

function VersionSelect(props: { label: string; versions: SubjectDetail['versions']; value: number; onChange: (e: Event) => void }) {
  return (
    <label>
      {props.label}
      <select aria-label={props.label} value={String(props.value)} onChange={props.onChange}>
        {props.versions.map((v) => (
          <option value={String(v.version)}>
            {v.version} (id {v.id})
          </option>
        ))}
      </select>
    </label>
  )
}

export function SchemaPage({ subject }: { subject: string }) {
  const { data, error } = usePoll(() => get<SubjectDetail>('/subject', { subject }), [subject], 10_000)
  const [pair, setPair] = useState<{ from?: number; to?: number }>({})
  const versions = data?.versions ?? []
  const to = versions.find((v) => v.version === pair.to) ?? versions.at(-1)
  const from = versions.find((v) => v.version === pair.from) ?? versions.at(-2) ?? to
  const pick = (which: 'from' | 'to') => (e: Event) => setPair({ ...pair, [which]: Number((e.currentTarget as HTMLSelectElement).value) })
  return (
    <section>
      <h1>
        Subject <code>{subject}</code>
      </h1>
      <Problem error={error} />
      {!data || !from || !to ? (
        <Loading />
      ) : (
        <>
          <p class="facts">
            compatibility {data.compatibility} · versions {versions.map((v) => (v.deleted ? `${v.version} (deleted)` : v.version)).join(', ')}
          </p>
          <div class="card row">
            <VersionSelect label="Compare version" versions={versions} value={from.version} onChange={pick('from')} />
            <VersionSelect label="with version" versions={versions} value={to.version} onChange={pick('to')} />
          </div>
          <pre class="diff" aria-label={`Diff of versions ${from.version} and ${to.version}`}>
            {lineDiff(from.schema, to.schema).map((l) => (
              <span class={l.op === '+' ? 'add' : l.op === '-' ? 'del' : undefined}>{`${l.op} ${l.text}\n`}</span>
            ))}
          </pre>
        </>
      )}
    </section>
  )
}
