// What a console page costs to load with 100 topics and 50 groups: bytes over the wire (page, bundle and API
// answers, cold cache) and milliseconds from navigation to the full table, measured in Chromium. The figures are
// printed and written to .cache/console-load.json; they are not asserted (the machine is shared), only that the
// pages show every row.
import { writeFileSync } from 'node:fs'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startOpsServer, type OpsServer } from '../../src/ops/index.js'
import { useTestKafka } from '../helpers/kafka.js'
import { launchBrowser, type Browser } from './browser.js'

const TOPICS = 100
const GROUPS = 50
const PARTITIONS = 3

const t = useTestKafka('console_load')
const admin = t.kafka.admin()
let server: OpsServer
let browser: Browser
const names = Array.from({ length: TOPICS }, (_, i) => `load-${String(i).padStart(3, '0')}`)

beforeAll(async () => {
  await admin.connect()
  await admin.createTopics({ topics: names.map((topic) => ({ topic, numPartitions: PARTITIONS })) })
  const producer = await t.producer()
  for (const topic of names) await producer.send({ topic, messages: Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })) })
  // every group has committed offsets on two topics, so the list shows its lag
  for (let g = 0; g < GROUPS; g++) {
    for (const topic of [names[g]!, names[g + GROUPS]!]) {
      await admin.setOffsets({
        groupId: `load-group-${g}`,
        topic,
        partitions: Array.from({ length: PARTITIONS }, (_, partition) => ({ partition, offset: '1' })),
      })
    }
  }
  server = await startOpsServer({ kafka: t.kafka, port: 0 })
  browser = await launchBrowser()
})
afterAll(async () => {
  await browser?.close()
  await server?.close()
  await admin.disconnect()
})

interface Cost {
  page: string
  /** 1: the browser's first tab (its start-up counts), 2: a later tab; both with an empty cache */
  run: number
  bytes: number
  requests: number
  /** navigation start to the full table */
  ms: number
  /** the page's API call alone (request start to response end) */
  apiMs: number
  apiBytes: number
}

async function measure(page: Page, hash: string, api: string, rows: number, run: number): Promise<Cost> {
  await page.goto(`${server.url}/${hash}`)
  await page
    .locator('tbody tr')
    .nth(rows - 1)
    .waitFor()
  return page.evaluate(`(() => {
    const ms = performance.now()
    const entries = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]
    const call = performance.getEntriesByType('resource').find((e) => e.name.includes(${JSON.stringify(api)}))
    return {
      page: ${JSON.stringify(hash)},
      run: ${run},
      bytes: entries.reduce((a, e) => a + e.transferSize, 0),
      requests: entries.length,
      ms: Math.round(ms),
      apiMs: Math.round(call.responseEnd - call.startTime),
      apiBytes: call.transferSize,
    }
  })()`)
}

it(`loads the topic and group lists with ${TOPICS} topics and ${GROUPS} groups`, async () => {
  const costs: Cost[] = []
  const pages = [
    ['#/topics', '/console/api/topics', TOPICS],
    ['#/groups', '/console/api/groups', GROUPS],
  ] as const
  for (const [run, [hash, api, rows]] of [1, 2].flatMap((r) => pages.map((p) => [r, p] as const))) {
    // a fresh tab each time, and routing disables Chromium's cache: the whole page is paid for, as on a first visit
    const { page, errors } = await browser.page()
    await page.route('**/*', (route) => route.continue())
    costs.push(await measure(page, hash, api, rows, run))
    expect(errors).toEqual([])
    await page.close()
  }
  for (const c of costs)
    console.log(
      `console load ${c.page} (tab ${c.run}): ${c.bytes} B in ${c.requests} requests, ${c.ms} ms to the full table; API ${c.apiBytes} B, ${c.apiMs} ms`,
    )
  writeFileSync('.cache/console-load.json', `${JSON.stringify({ topics: TOPICS, groups: GROUPS, partitionsPerTopic: PARTITIONS, costs }, null, 2)}\n`)
})
