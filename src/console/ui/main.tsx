// The console's shell: who may do what (GET /session), the sign-in form when the server wants a token, the
// navigation, and the page for the current hash route.
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { ApiError, get, post, token, wantsToken } from './api.js'
import { GroupPage, GroupsPage } from './groups.js'
import { MessagesPage } from './messages.js'
import { SchemaPage, SchemasPage } from './schemas.js'
import { href, useRoute, type Route } from './route.js'
import { TopicPage, TopicsPage } from './topics.js'
import { Confirm, Loading, Problem } from './widgets.js'
import type { ConsoleSession } from '../api.js'

function SignIn({ onSignedIn, failed }: { onSignedIn: () => void; failed: boolean }) {
  const [value, setValue] = useState('')
  return (
    <form
      class="card signin"
      onSubmit={(e) => {
        e.preventDefault()
        token.set(value.trim())
        onSignedIn()
      }}
    >
      <h1>Sign in</h1>
      <p>This server needs its bearer token (DATAHUB_PGQUEUE_OPS_TOKEN). It is kept for this tab only.</p>
      {failed && (
        <p class="error" role="alert">
          That token was not accepted.
        </p>
      )}
      <label>
        Token <input type="password" autocomplete="current-password" required value={value} onInput={(e) => setValue(e.currentTarget.value)} />
      </label>
      <button type="submit">Sign in</button>
    </form>
  )
}

function Maintenance() {
  const [open, setOpen] = useState(false)
  const [status, setStatus] = useState<string>()
  const run = async () => {
    setOpen(false)
    setStatus('Running maintenance…')
    try {
      const r = await post<{ skipped: boolean; durationMs?: number; deleted?: Record<string, number> }>('/maintenance', {})
      const deleted = Object.values(r.deleted ?? {}).reduce((a, n) => a + n, 0)
      setStatus(r.skipped ? 'Skipped: another runner holds the lock' : `Maintenance done in ${r.durationMs} ms, ${deleted} rows deleted`)
    } catch (err) {
      setStatus((err as Error).message)
    }
  }
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        Run maintenance
      </button>
      <span class="status" aria-live="polite">
        {status}
      </span>
      <Confirm open={open} title="Run maintenance now?" confirm="Run maintenance" onCancel={() => setOpen(false)} onConfirm={() => void run()}>
        <p>Retention, partition creation and housekeeping run once now, as the scheduler would run them.</p>
      </Confirm>
    </>
  )
}

const NAV = [
  ['topics', 'Topics'],
  ['groups', 'Groups'],
  ['messages', 'Messages'],
  ['schemas', 'Schemas'],
] as const

const section = (page: string) => ({ topic: 'topics', group: 'groups', schema: 'schemas' })[page] ?? page

function Page({ route, session }: { route: Route; session: ConsoleSession }) {
  const p = route.params
  switch (route.page) {
    case 'topics':
      return <TopicsPage />
    case 'topic':
      return <TopicPage name={p.get('name') ?? ''} canAct={session.canAct} />
    case 'groups':
      return <GroupsPage />
    case 'group':
      return <GroupPage id={p.get('id') ?? ''} canAct={session.canAct} />
    case 'messages':
      return <MessagesPage key={p.toString()} params={p} />
    case 'schemas':
      return <SchemasPage />
    case 'schema':
      return <SchemaPage subject={p.get('subject') ?? ''} />
    default:
      return <p>No page {route.page}.</p>
  }
}

function App() {
  const route = useRoute()
  const [session, setSession] = useState<ConsoleSession>()
  const [problem, setProblem] = useState<ApiError | undefined>(wantsToken && token.get() === null ? new ApiError(401, 'Sign in') : undefined)
  const [attempt, setAttempt] = useState(0)
  useEffect(() => {
    if (wantsToken && token.get() === null) return
    get<ConsoleSession>('/session').then(
      (s) => (setSession(s), setProblem(undefined)),
      (err: ApiError) => setProblem(err),
    )
  }, [attempt])
  if (problem?.status === 401) {
    return <SignIn failed={token.get() !== null} onSignedIn={() => (setProblem(undefined), setAttempt((a) => a + 1))} />
  }
  if (!session) return problem ? <Problem error={problem} /> : <Loading />
  const current = section(route.page)
  return (
    <>
      <header>
        <strong class="brand">kafkajs-pgqueue</strong>
        <nav aria-label="Console">
          {NAV.map(([page, label]) => (
            <a href={href(page)} aria-current={current === page ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <span class="muted small">
          schema {session.schema}
          {session.canAct ? '' : ' · read only'}
        </span>
        {session.canAct && <Maintenance />}
        {token.get() !== null && (
          <button type="button" class="link" onClick={() => (token.clear(), location.reload())}>
            Sign out
          </button>
        )}
      </header>
      <main>
        <Page route={route} session={session} />
      </main>
    </>
  )
}

render(<App />, document.getElementById('app')!)
