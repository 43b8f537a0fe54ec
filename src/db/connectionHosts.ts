// Host selection for libpq-style host lists, which node-postgres does not do itself. Every new connection (pooled,
// LISTEN, migrator) goes to the host that served last; when that host refuses, drops or turns read-only, the next
// connection probes the list in order, as libpq does, and takes the first host that accepts and (for read-write /
// primary) is writable. Between failed rounds the probes back off, and concurrent connects share one round, so a
// failover costs a few probe connections, not one per waiting caller. A connect that finds no host fails with a
// retriable KafkaJSConnectionError: the caller's retry (the producer's, the consumer runner's) comes back later.
import pg from 'pg'
import type { ConnectionHost, TargetSessionAttrs } from '../config/types.js'
import { describeHosts } from '../config/hostList.js'
import { KafkaJSConnectionError } from '../kafkajs/errors.js'

export interface HostSelectorOptions {
  hosts: readonly ConnectionHost[]
  target: TargetSessionAttrs
  /** the settings of every connection (credentials, database, ssl, timeouts); host and port come from the list */
  clientConfig: pg.ClientConfig
  /** a probe that neither connects nor answers within this is counted as down */
  probeTimeoutMs: number
  /** first pause between two failed rounds; doubled each time up to maxBackoffMs */
  initialBackoffMs?: number
  maxBackoffMs?: number
  log?: (msg: string) => void
}

// libpq's checks: read-write asks transaction_read_only (so default_transaction_read_only=on counts as read-only),
// primary asks whether the server is in recovery. Connection-level protocol, like BEGIN, not queue SQL.
const CHECKS: Record<Exclude<TargetSessionAttrs, 'any'>, { text: string; serves: (v: unknown) => boolean }> = {
  'read-write': { text: 'SHOW transaction_read_only', serves: (v) => v === 'off' },
  primary: { text: 'SELECT pg_is_in_recovery() AS in_recovery', serves: (v) => v === false },
}

/** Whether a connected client may serve `target`. */
async function serves(client: pg.Client, target: TargetSessionAttrs): Promise<boolean> {
  if (target === 'any') return true
  const check = CHECKS[target]
  const { rows } = await client.query<Record<string, unknown>>(check.text)
  return check.serves(Object.values(rows[0] ?? {})[0])
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref())

export class HostSelector {
  private current?: ConnectionHost
  private round?: Promise<ConnectionHost>
  private failedRounds = 0
  /** on the monotonic clock: a wall-clock step back must not turn a 2 s backoff into minutes of refused connects */
  private nextRoundAt = 0

  constructor(private readonly options: HostSelectorOptions) {}

  get target(): TargetSessionAttrs {
    return this.options.target
  }

  /** The host that served last, or (after a failure) the first one of a probing round that can serve. */
  select(): Promise<ConnectionHost> {
    if (this.current) return Promise.resolve(this.current)
    this.round ??= this.probeRound().finally(() => (this.round = undefined))
    return this.round
  }

  /** A connection to `host` failed or found it unable to serve: the next connect probes the list again. */
  failed(host: ConnectionHost): void {
    if (this.current === host) this.current = undefined
  }

  private async probeRound(): Promise<ConnectionHost> {
    const { hosts, target, log } = this.options
    const wait = this.nextRoundAt - performance.now()
    if (wait > 0) await sleep(wait)
    const reasons: string[] = []
    for (const host of hosts) {
      const why = await this.probe(host)
      if (why === undefined) {
        if (this.failedRounds > 0 || hosts.length > 1) log?.(`PostgreSQL: connecting to ${describeHosts([host])} (target_session_attrs=${target})`)
        this.failedRounds = 0
        this.current = host
        return host
      }
      reasons.push(`${describeHosts([host])}: ${why}`)
    }
    this.failedRounds++
    const initial = this.options.initialBackoffMs ?? 100
    this.nextRoundAt = performance.now() + Math.min(this.options.maxBackoffMs ?? 2000, initial * 2 ** (this.failedRounds - 1))
    throw new KafkaJSConnectionError(`no PostgreSQL host can serve target_session_attrs=${target} (${reasons.join('; ')})`)
  }

  /** undefined when the host can serve, else why not. */
  private async probe(host: ConnectionHost): Promise<string | undefined> {
    const client = new pg.Client({ ...this.options.clientConfig, connectionTimeoutMillis: this.options.probeTimeoutMs })
    aimAt(client, host)
    client.on('error', () => undefined) // an answer lost mid-probe: the awaited call rejects as well
    try {
      await client.connect()
      return (await serves(client, this.options.target)) ? undefined : 'read-only (a standby, or not yet promoted)'
    } catch (err) {
      return (err as Error).message
    } finally {
      await client.end().catch(() => undefined)
    }
  }
}

interface Internals {
  connectionParameters: { host: string; port: number }
  connection: { stream: { destroyed?: boolean } }
  _ending?: boolean
}

/**
 * Points a client not yet connected at `host`. pg lets a connection string's host win over a `host` option, so the
 * resolved fields are set instead; a host without a port gets pg's default port (PGPORT, else 5432), as in libpq.
 */
function aimAt(client: pg.Client, host: ConnectionHost): void {
  const port = host.port ?? (Number(process.env.PGPORT) || pg.defaults.port || 5432)
  const self = client as unknown as Internals
  client.host = self.connectionParameters.host = host.host
  client.port = self.connectionParameters.port = port
}

/**
 * A pg.Client class whose connect() first asks the selector for a host, then checks the session it got: pg.Pool
 * (its `Client` option) and the LISTEN connection use it, so every connection of a client follows a failover.
 */
export function hostSelectingClient(selector: HostSelector): typeof pg.Client {
  return class HostSelectingClient extends pg.Client {
    override connect(): Promise<pg.Client>
    override connect(callback: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): void
    override connect(callback?: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): Promise<pg.Client> | void {
      const connected = this.connectSelected().then(() => this)
      if (!callback) return connected
      connected.then(
        (client) => (callback as (err: null, c: pg.Client) => void)(null, client),
        (err: Error) => (callback as (err: Error) => void)(err),
      )
    }

    private async connectSelected(): Promise<void> {
      const host = await selector.select()
      const self = this as unknown as Internals
      // pg-pool's connection timeout destroys the stream of a client still connecting: do not connect it afterwards
      if (self.connection.stream.destroyed) throw new Error('Connection terminated due to connection timeout')
      aimAt(this, host)
      try {
        await super.connect()
      } catch (err) {
        selector.failed(host)
        throw err
      }
      // a connection the server dropped (killed primary, demotion): the next connect probes instead of retrying it
      this.once('end', () => {
        if (!self._ending) selector.failed(host)
      })
      let ok: boolean
      try {
        ok = await serves(this, selector.target)
      } catch (err) {
        selector.failed(host)
        await this.end().catch(() => undefined)
        throw err
      }
      if (!ok) {
        selector.failed(host)
        await this.end().catch(() => undefined)
        throw new KafkaJSConnectionError(`${describeHosts([host])} cannot serve target_session_attrs=${selector.target} (read-only)`)
      }
    }
  }
}
