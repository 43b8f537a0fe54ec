// The web console in a real headless Chromium against a real schema: every page renders the data seeded by
// ./fixture.ts, an offset reset done through the page changes the group's committed offsets (read back with the
// admin API), a read-only session cannot act, and no page logs a console error. Screenshots of every page go to
// .cache/console (docs/console with UPDATE_SCREENSHOTS=1).
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startOpsServer, type OpsServer } from '../../src/ops/index.js'
import { useTestKafka } from '../helpers/kafka.js'
import { launchBrowser, type Browser } from './browser.js'
import { seedConsole, type ConsoleFixture } from './fixture.js'

const ADMIN_TOKEN = 'console-admin-token-0123456789'
const READER_TOKEN = 'console-reader-token-0123456789'
const SHOTS = process.env.UPDATE_SCREENSHOTS ? 'docs/console' : '.cache/console'

const t = useTestKafka('console')
let fx: ConsoleFixture
let server: OpsServer
let readOnly: OpsServer
let browser: Browser

beforeAll(async () => {
  fx = await seedConsole(t)
  server = await startOpsServer({ kafka: t.kafka, port: 0, token: ADMIN_TOKEN })
  // a second server on the same schema whose `authorize` says no: signed in, but not allowed to change anything
  readOnly = await startOpsServer({ kafka: t.kafka, port: 0, token: READER_TOKEN, authorize: () => false })
  browser = await launchBrowser()
  mkdirSync(SHOTS, { recursive: true })
})
afterAll(async () => {
  await browser?.close()
  await readOnly?.close()
  await server?.close()
  await fx?.close()
})

async function signIn(page: Page, base: string, token: string): Promise<void> {
  await page.goto(`${base}/`)
  await page.getByLabel('Token').fill(token)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('navigation', { name: 'Console' }).waitFor()
}

const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false })
const cell = (page: Page, text: string | RegExp) => page.getByRole('cell', { name: text, exact: typeof text === 'string' }).first()
const committed = async (group: string, topic: string) =>
  (await fx.admin.fetchOffsets({ groupId: group, topics: [topic] }))[0]!.partitions.map((p) => [p.partition, p.offset]).sort()

describe('console', () => {
  it('renders every page from the real schema without console errors', async () => {
    const { page, errors } = await browser.page()
    await signIn(page, server.url, ADMIN_TOKEN)

    // Topics: both topics, the offsets in their logs, retention
    await cell(page, fx.orders).waitFor()
    expect(await page.getByRole('row').filter({ hasText: fx.orders }).innerText()).toMatch(/3\s+30\s/)
    await cell(page, fx.users).waitFor()
    await shot(page, 'topics')

    // Topic: three partitions, settings, the produce form (an authorized session)
    await page.getByRole('link', { name: fx.orders }).click()
    await page.getByRole('region', { name: 'Partitions' }).waitFor()
    expect(await page.getByRole('region', { name: 'Partitions' }).getByRole('row').count()).toBe(4)
    await cell(page, 'retention.ms').waitFor()
    await page.getByRole('heading', { name: 'Produce a test message' }).waitFor()
    await shot(page, 'topic')

    // Groups: both groups with their state
    await page.getByRole('link', { name: 'Groups' }).click()
    const liveRow = page.getByRole('row').filter({ hasText: fx.liveGroup })
    await liveRow.waitFor()
    expect(await liveRow.innerText()).toContain('Stable')
    expect(await page.getByRole('row').filter({ hasText: fx.idleGroup }).innerText()).toContain('Empty')
    await shot(page, 'groups')

    // Group: the running member, its heartbeat and assignment, the generation, per-partition lag
    await page.getByRole('link', { name: fx.liveGroup }).click()
    const member = page.getByRole('region', { name: 'Members' }).getByRole('row').filter({ hasText: fx.liveClientId })
    await member.waitFor()
    expect(await member.innerText()).toMatch(new RegExp(`s ago[\\s\\S]*${fx.users}: 0`))
    expect(await page.locator('.facts').innerText()).toMatch(/generation \d+/)
    await page.getByRole('region', { name: 'Offsets and lag' }).getByRole('row').filter({ hasText: fx.users }).waitFor()
    // the chart draws a line once the page has polled twice
    await page.locator('.chart polyline[points*=" "]').waitFor({ state: 'attached' })
    await shot(page, 'group')

    // Messages: the Avro value decoded through the registry, raw bytes as hex
    await page.goto(`${server.url}/#/messages?topic=${fx.users}&partition=0`)
    await page.getByLabel('value at offset 0').waitFor()
    expect(await page.getByLabel('value at offset 0').innerText()).toMatch(/"name": "ada",\s*"age": 36/)
    expect(await page.locator('.messages li').first().innerText()).toContain(`avro #${fx.schemaId}`)
    expect(await page.getByLabel('value at offset 1').innerText()).toBe('ff 00 01 fe')
    // search by key on a partition of the JSON topic: only that key's messages
    const [p0] = await fx.admin.fetchTopicOffsets(fx.orders)
    await page.goto(`${server.url}/#/messages?topic=${fx.orders}&partition=${p0!.partition}`)
    const keyOf = (await page.getByLabel('key at offset 0').innerText()).trim()
    await page.getByRole('textbox', { name: 'Key', exact: true }).fill(keyOf)
    await page.getByRole('button', { name: 'Browse' }).click()
    await page.waitForURL(new RegExp(`key=${keyOf}$`))
    await page.locator('.messages li').first().waitFor()
    const keys = await page.locator('[aria-label^="key at offset"]').allInnerTexts()
    expect(keys.length).toBe(3) // keys k0..k9 over 30 messages: three of each, all in one partition
    expect(new Set(keys)).toEqual(new Set([keyOf]))
    expect(await page.locator('.messages').innerText()).toContain('source')
    await shot(page, 'messages')

    // Schemas: the subject, its versions and level; the diff of v1 and v2 adds the field
    await page.getByRole('link', { name: 'Schemas' }).click()
    const subjectRow = page.getByRole('row').filter({ hasText: fx.subject })
    await subjectRow.waitFor()
    expect(await subjectRow.innerText()).toMatch(/1, 2[\s\S]*AVRO[\s\S]*BACKWARD/)
    await shot(page, 'schemas')
    await page.getByRole('link', { name: fx.subject }).click()
    const diff = page.getByLabel('Diff of versions 1 and 2')
    await diff.waitFor()
    expect(await diff.locator('.add').allInnerTexts()).toEqual(expect.arrayContaining([expect.stringContaining('"name": "age"')]))
    await shot(page, 'schema-diff')

    expect(errors).toEqual([])
    await page.close()
  })

  it('an offset reset through the page (preview, confirm) changes the committed offsets', async () => {
    const before = await committed(fx.idleGroup, fx.orders)
    const highs = (await fx.admin.fetchTopicOffsets(fx.orders)).map((m) => [m.partition, m.high]).sort()
    expect(before).toEqual(highs) // the group consumed everything
    const { page, errors } = await browser.page()
    await signIn(page, server.url, ADMIN_TOKEN)
    await page.goto(`${server.url}/#/group?id=${fx.idleGroup}`)
    await page.getByRole('heading', { name: 'Reset offsets' }).waitFor()
    await page.getByLabel('To', { exact: true }).selectOption('offset')
    await page.getByLabel('Offset', { exact: true }).fill('4')
    await page.getByRole('button', { name: 'Preview (dry run)' }).click()
    const preview = page.getByRole('region', { name: 'Reset preview' })
    await preview.waitFor()
    expect(await preview.getByRole('row').count()).toBe(4)
    const [, high0] = highs[0]!
    expect(await preview.getByRole('row').nth(1).innerText()).toMatch(new RegExp(`^0\\s+${high0}\\s+4\\s+0\\s+${high0}$`))
    expect(await committed(fx.idleGroup, fx.orders)).toEqual(before) // a dry run changes nothing
    await shot(page, 'reset-preview')

    await page.getByRole('button', { name: 'Apply reset…' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Reset offsets' }).click()
    await page.getByText(`Offsets of ${fx.idleGroup} on ${fx.orders} reset.`).waitFor()
    expect(await committed(fx.idleGroup, fx.orders)).toEqual(before.map(([p]) => [p, '4']))

    // and back to the earliest offsets, the other way a reset is asked for
    await page.getByLabel('To', { exact: true }).selectOption('earliest')
    await page.getByRole('button', { name: 'Preview (dry run)' }).click()
    await preview.waitFor()
    await page.getByRole('button', { name: 'Apply reset…' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Reset offsets' }).click()
    await page.getByText(`Offsets of ${fx.idleGroup} on ${fx.orders} reset.`).waitFor()
    expect(await committed(fx.idleGroup, fx.orders)).toEqual(before.map(([p]) => [p, '0']))
    expect(errors).toEqual([])
    await page.close()
  })

  it('a running group is not reset: the page says why and nothing changes', async () => {
    const before = await committed(fx.liveGroup, fx.users)
    const { page } = await browser.page()
    await signIn(page, server.url, ADMIN_TOKEN)
    await page.goto(`${server.url}/#/group?id=${fx.liveGroup}`)
    await page.getByRole('button', { name: 'Preview (dry run)' }).click()
    await page.getByRole('button', { name: 'Apply reset…' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Reset offsets' }).click()
    await page.getByRole('alert').filter({ hasText: 'must have no running instances' }).waitFor()
    expect(await committed(fx.liveGroup, fx.users)).toEqual(before)
    await page.close()
  })

  it('produces a test message and runs maintenance from the page', async () => {
    const high = async () => (await fx.admin.fetchTopicOffsets(fx.users))[0]!.high
    const before = await high()
    const { page, errors } = await browser.page()
    await signIn(page, server.url, ADMIN_TOKEN)
    await page.goto(`${server.url}/#/topic?name=${fx.users}`)
    await page.getByLabel('Value').fill('hello from the console')
    await page.getByRole('button', { name: 'Send' }).click()
    await page.getByText(`Sent to partition 0 at offset ${before}`).waitFor()
    expect(await high()).toBe(String(Number(before) + 1))

    await page.getByRole('button', { name: 'Run maintenance' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Run maintenance' }).click()
    await page.getByText(/Maintenance done in \d+ ms|Skipped: another runner/).waitFor()
    expect(errors).toEqual([])
    await page.close()
  })

  it('a read-only session sees no actions and cannot trigger one; no token, no data', async () => {
    const before = await committed(fx.idleGroup, fx.orders)
    const { page, errors } = await browser.page()
    await signIn(page, readOnly.url, READER_TOKEN)
    await page.getByText('read only').waitFor()
    expect(await page.getByRole('button', { name: 'Run maintenance' }).count()).toBe(0)
    await page.goto(`${readOnly.url}/#/group?id=${fx.idleGroup}`)
    await page.getByRole('region', { name: 'Offsets and lag' }).waitFor()
    expect(await page.getByRole('heading', { name: 'Reset offsets' }).count()).toBe(0)
    await page.goto(`${readOnly.url}/#/topic?name=${fx.orders}`)
    await page.getByRole('region', { name: 'Partitions' }).waitFor()
    expect(await page.getByRole('heading', { name: 'Produce a test message' }).count()).toBe(0)
    expect(errors).toEqual([])

    // what a hand-made request from the signed-in page gets: 403, and nothing changes
    const forced = await page.evaluate(
      async ([token, group, topic]) => {
        const send = (path: string, body: unknown) =>
          fetch(`/console/api/${path}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          }).then((r) => r.status)
        return [
          await send('reset-offsets', { group, topic, to: 'latest', dryRun: false }),
          await send('produce', { topic, value: 'x' }),
          await send('maintenance', {}),
        ]
      },
      [READER_TOKEN, fx.idleGroup, fx.orders],
    )
    expect(forced).toEqual([403, 403, 403])
    // without the token (another tab of someone who never signed in) even reads are refused
    const anonymous = await page.evaluate(() =>
      Promise.all(['/console/api/topics', '/console/api/session'].map((u) => fetch(u).then((r) => r.status))),
    )
    expect(anonymous).toEqual([401, 401])
    expect(await committed(fx.idleGroup, fx.orders)).toEqual(before)
    await page.close()
  })

  it('is usable on a phone-sized screen', async () => {
    const { page, errors } = await browser.page({ width: 390, height: 780 })
    await signIn(page, server.url, ADMIN_TOKEN)
    await page.goto(`${server.url}/#/group?id=${fx.liveGroup}`)
    await page.getByRole('region', { name: 'Members' }).waitFor()
    // nothing wider than the screen but the tables' own scroll boxes
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390)
    await shot(page, 'phone-group')
    expect(errors).toEqual([])
    await page.close()
  })
})
