// What every example shares: checking its own outcome, bounding its waits, and exiting non-zero on failure.

export function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`check failed: ${what}`)
}

export async function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms)))
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** Runs an example's main function; any failure prints and exits 1. */
export function run(main: () => Promise<void>): void {
  main().catch((err) => {
    console.error(err)
    process.exit(1)
  })
}
