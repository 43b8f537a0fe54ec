// Debian's Chromium through playwright-core, headless, with a fresh profile and without the background services
// that would keep trying to reach the (closed) network. Every page records its console errors.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

export interface Browser {
  context: BrowserContext
  /** a new page (tab) whose console errors and uncaught exceptions land in `errors` */
  page(viewport?: { width: number; height: number }): Promise<{ page: Page; errors: string[] }>
  close(): Promise<void>
}

export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'console-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1100, height: 720 },
  })
  return {
    context,
    async page(viewport) {
      const page = await context.newPage()
      if (viewport) await page.setViewportSize(viewport)
      const errors: string[] = []
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(`${m.text()} (${m.location().url})`)
      })
      page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`))
      return { page, errors }
    },
    async close() {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    },
  }
}
