// What ensureEmbeddedPostgres takes and gives.

export interface EmbeddedOptions {
  /** holds the cluster (`cluster/`), `embedded.json` (port, password) and the start lock */
  dataDir: string
  /** 0 or absent: a free loopback port, remembered for the next start */
  port?: number
  log?: (msg: string) => void
  /**
   * Several processes (e.g. concurrent test runs) share the server: each registers as a user,
   * the server outlives the process that started it, and `stop()` stops it only for the last user.
   */
  shared?: boolean
}

export interface EmbeddedServer {
  connectionString: string
  /**
   * Stops the server only if this call started it (a reused server is left running);
   * with `shared`, only when no other live process still uses it.
   */
  stop(): Promise<void>
  reused: boolean
}
