// One store handle per open database: every store function that takes (db, tables, ...) bound once to the pool
// and the table names, so callers write ctx.store.offsets.readOffsets(groupId, topic) instead of passing
// ctx.db.pool and ctx.tables at every call. Inside a transaction, storeFor(db, client) binds a client instead.
import type { Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import * as browse from './browse.js'
import * as dataHubMembers from './dataHubMembers.js'
import * as datahubTopics from './datahubTopics.js'
import * as deliveryAttempts from './deliveryAttempts.js'
import * as fetch from './fetch.js'
import * as groupGeneration from './groupGeneration.js'
import * as lag from './lag.js'
import * as leases from './leases.js'
import * as members from './members.js'
import * as messages from './messages.js'
import * as offsetResets from './offsetResets.js'
import * as offsets from './offsets.js'
import * as partitionStats from './partitionStats.js'
import * as partitions from './partitions.js'
import * as producers from './producers.js'
import * as registrations from './registrations.js'
import * as registryConfig from './registryConfig.js'
import * as registryMode from './registryMode.js'
import * as registrySchemas from './registrySchemas.js'
import * as registryVersions from './registryVersions.js'
import * as server from './server.js'
import * as topicConfig from './topicConfig.js'
import * as topics from './topics.js'

const modules = {
  browse,
  dataHubMembers,
  datahubTopics,
  deliveryAttempts,
  fetch,
  groupGeneration,
  lag,
  leases,
  members,
  messages,
  offsetResets,
  offsets,
  partitionStats,
  partitions,
  producers,
  registrations,
  registryConfig,
  registryMode,
  registrySchemas,
  registryVersions,
  server,
  topicConfig,
  topics,
}

/** A module's (db, tables, ...args) functions, as (...args) functions. */
type Bound<M> = {
  [K in keyof M as M[K] extends (db: Queryable, t: Tables, ...args: never[]) => unknown ? K : never]: M[K] extends (
    db: Queryable,
    t: Tables,
    ...args: infer A
  ) => infer R
    ? (...args: A) => R
    : never
}

export type Store = { readonly [N in keyof typeof modules]: Bound<(typeof modules)[N]> }

/** An open database: a `Database`, or the pool and tables of `kafka.database()` / the registry's backend. */
interface Opened {
  readonly pool: Queryable
  readonly tables: Tables
}

const bound = new WeakMap<Opened, Store>()

function bindModule(mod: object, db: Queryable, t: Tables): Readonly<Record<string, unknown>> {
  const fns: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(mod)) {
    if (typeof value === 'function') fns[key] = (...args: unknown[]) => (value as (...a: unknown[]) => unknown)(db, t, ...args)
  }
  return Object.freeze(fns)
}

/**
 * A store whose modules are bound when first used: a transaction binds its client on every begin, and most use two
 * or three of the modules, so the others are never wrapped.
 */
class BoundStore {
  readonly #bound = new Map<string, Readonly<Record<string, unknown>>>()
  constructor(
    readonly db: Queryable,
    readonly t: Tables,
  ) {}

  module(name: string, mod: object): Readonly<Record<string, unknown>> {
    let fns = this.#bound.get(name)
    if (!fns) this.#bound.set(name, (fns = bindModule(mod, this.db, this.t)))
    return fns
  }
}
for (const [name, mod] of Object.entries(modules)) {
  Object.defineProperty(BoundStore.prototype, name, {
    get(this: BoundStore) {
      return this.module(name, mod)
    },
  })
}

const bind = (db: Queryable, t: Tables): Store => new BoundStore(db, t) as unknown as Store

/** The store of an open database (bound to its pool, built once), or bound to `client` for a transaction. */
export function storeFor(db: Opened, client?: Queryable): Store {
  if (client) return bind(client, db.tables)
  let store = bound.get(db)
  if (!store) bound.set(db, (store = bind(db.pool, db.tables)))
  return store
}
