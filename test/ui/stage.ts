/// <reference lib="dom" />
/**
 * What each dashboard test file stands on: Debian's Chromium, a real listening server with the
 * demo session (seed.ts), screenshots under test/artifacts/, and a watch on every page for
 * errors it throws or logs (a CSP violation, a failed module, an unexpected 4xx/5xx).
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'
import { launchChromium } from './browser.js'
import { seedDemo, type Api, type Demo } from './seed.js'

const ARTIFACTS = join(import.meta.dirname, '..', 'artifacts')

export interface Stage {
  browser: Browser
  app: App
  api: Api
  demo: Demo
  /** Errors the watched pages threw or logged, as text; the tests expect none. */
  errors: string[]
}

/** A PNG drawn by the browser itself (a blob needs real image bytes). */
async function drawPng (browser: Browser): Promise<Buffer> {
  const p = await browser.newPage()
  await p.setContent('<div style="width:240px;height:120px;background:linear-gradient(135deg,#2da44e,#1f6feb);' +
    'font:bold 26px sans-serif;color:#fff;display:flex;align-items:center;justify-content:center">CI 50/50 passed</div>')
  const png = await p.locator('div').screenshot()
  await p.close()
  return png
}

/** Launches Chromium, starts a server and seeds the demo session over its API. */
export async function openStage (): Promise<Stage> {
  mkdirSync(ARTIFACTS, { recursive: true })
  const browser = await launchChromium()
  const app = await buildTestApp()
  const api = { baseUrl: await app.listen({ port: 0, host: '127.0.0.1' }) }
  const demo = await seedDemo(api, 'demo', await drawPng(browser))
  return { browser, app, api, demo, errors: [] }
}

export async function closeStage (stage: Stage | undefined): Promise<void> {
  await stage?.browser.close()
  await stage?.app.close()
}

/**
 * Records into `errors` what `page` throws and what it logs as an error. `expected` are
 * answers a test provokes on purpose (a 401 before the token is given), matched against the text.
 */
export function watch (page: Page, errors: string[], expected: RegExp[] = []): Page {
  page.on('pageerror', (err) => errors.push(`page error: ${err.message}`))
  page.on('console', (message) => {
    if (message.type() !== 'error' && message.type() !== 'warning') return
    const text = `${message.text()} ${message.location().url}`
    if (!expected.some((re) => re.test(text))) errors.push(`console ${message.type()}: ${text}`)
  })
  return page
}

/** A screenshot of the page as it is now, under test/artifacts/. */
export const shot = async (p: Page, name: string): Promise<void> => { await p.screenshot({ path: join(ARTIFACTS, `${name}.png`) }) }

/** Ids of the conversation rows in the DOM, in order. */
export const rowIds = async (p: Page): Promise<string[]> =>
  await p.locator('.conversation [role=listitem]').evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.id ?? ''))
