import { EventEmitter } from 'node:events'
import pg from 'pg'
import type { Logger } from 'kafkajs'
import { listen } from '../store/notifications.js'
import { OUTBOX_NOTIFY_PREFIX } from '../store/outboxStaging.js'

/**
 * One LISTEN connection per client. Producers notify `<topicId>` on commit and members notify `g:<group>` on
 * join/leave; this turns them into 'topic' and 'group' events, and the `o:<topicId>` of a staging outbox COMMIT into
 * 'outbox'. Pollers never depend on it: when the connection
 * drops they keep polling every maxWaitTimeInMs while it reconnects (pgbouncer transaction pooling drops LISTEN).
 */
export class Wakeups extends EventEmitter {
  private client?: pg.Client
  private stopped = true
  private reconnectTimer?: NodeJS.Timeout
  private users = 0

  constructor(
    /** a connection with the pool's settings (and its host selection) */
    private readonly newClient: () => pg.Client,
    private readonly channel: string,
    private readonly logger: Logger,
  ) {
    super()
    this.setMaxListeners(0)
  }

  get listening(): boolean {
    return this.client !== undefined
  }

  /** Starts listening for the first user; later users share the connection. */
  async start(): Promise<void> {
    this.users++
    if (this.users > 1) return
    this.stopped = false
    await this.connect()
  }

  async stop(): Promise<void> {
    this.users = Math.max(0, this.users - 1)
    if (this.users > 0) return
    this.stopped = true
    clearTimeout(this.reconnectTimer)
    const client = this.client
    this.client = undefined
    await client?.end().catch(() => undefined)
  }

  private async connect(): Promise<void> {
    const client = this.newClient()
    client.on('notification', (msg) => {
      const payload = msg.payload ?? ''
      if (payload.startsWith('g:')) this.emit('group', payload.slice(2))
      else if (payload.startsWith(OUTBOX_NOTIFY_PREFIX)) this.emit('outbox', payload.slice(OUTBOX_NOTIFY_PREFIX.length))
      else this.emit('topic', payload)
    })
    client.on('error', (err) => this.lost(client, err))
    client.on('end', () => this.lost(client))
    try {
      await client.connect()
      await listen(client, this.channel)
      if (this.stopped) {
        await client.end()
        return
      }
      this.client = client
      // anything committed while we were not listening must be fetched: wake everyone once
      this.emit('reconnected')
    } catch (err) {
      await client.end().catch(() => undefined)
      this.lost(client, err as Error)
    }
  }

  private lost(client: pg.Client, err?: Error): void {
    if (this.client === client) this.client = undefined
    if (this.stopped || this.reconnectTimer) return
    if (err) this.logger.warn('LISTEN connection lost; polling until it is back', { error: err.message })
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined
      if (!this.stopped && !this.client) void this.connect()
    }, 1000)
    this.reconnectTimer.unref()
  }
}
