// A registry server on the test file's schema, and a small JSON client for its REST API.
import { afterAll, beforeAll } from 'vitest'
import { startSchemaRegistry, type StartedSchemaRegistry } from '../../../src/registry/index.js'
import { useTestKafka, type TestKafka } from '../../helpers/kafka.js'

export const BASE_PATH = '/schema-registry/api'

export interface ApiReply {
  status: number
  contentType: string | null
  body: any
}

export interface RegistryFixture {
  t: TestKafka
  url(): string
  server(): StartedSchemaRegistry
  api(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiReply>
}

export function useRegistry(label: string): RegistryFixture {
  const t = useTestKafka(label)
  let started: StartedSchemaRegistry | undefined
  beforeAll(async () => {
    started = await startSchemaRegistry({ kafka: t.kafka, basePath: BASE_PATH })
  })
  afterAll(async () => {
    await started?.close()
  })
  return {
    t,
    url: () => started!.url,
    server: () => started!,
    async api(method, path, body, headers = {}) {
      const res = await fetch(`${started!.url}${path}`, {
        method,
        headers: { 'Content-Type': 'application/vnd.schemaregistry.v1+json', ...headers },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      })
      const text = await res.text()
      let parsed: unknown = text
      try {
        parsed = JSON.parse(text)
      } catch {
        // raw text
      }
      return { status: res.status, contentType: res.headers.get('content-type'), body: parsed }
    },
  }
}

/** A record schema `name` with int field `a` plus extra fields. */
export function record(name: string, extra: object[] = [], namespace = 'test.ns'): string {
  return JSON.stringify({ type: 'record', name, namespace, fields: [{ name: 'a', type: 'int' }, ...extra] })
}
