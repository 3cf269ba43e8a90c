/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The dashboard in a real browser (Debian's Chromium through playwright-core) against a real
 * listening server: the session list live from /v1/events, a session opened by its deep link,
 * entries appended over the API appearing live without moving the reader, a branch switch in
 * the tree and a leaf move, an image from a blob, the context view, an automatic resume after
 * the connection drops, the token prompt and a reload with a token, a 10,000-entry session
 * kept to a few DOM rows, the phone layout, dark mode and the keyboard. Each step saves a
 * screenshot under test/artifacts/. Without Chromium every test here fails (see browser.ts).
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'
import { bearer, tokenFixture, type TokenFixture } from '../helpers/tokens.js'
import { launchChromium } from './browser.js'
import { append, assistant, call, seedDemo, seedLong, user, type Api, type Demo } from './seed.js'

const ARTIFACTS = join(import.meta.dirname, '..', 'artifacts')
const STEP_MS = 60_000

let browser: Browser
let app: App
let api: Api
let page: Page
let demo: Demo

/** A screenshot of the page as it is now, under test/artifacts/. */
const shot = async (p: Page, name: string): Promise<void> => { await p.screenshot({ path: join(ARTIFACTS, `${name}.png`) }) }

/** A PNG drawn by the browser itself (a blob needs real image bytes). */
async function drawPng (): Promise<Buffer> {
  const p = await browser.newPage()
  await p.setContent('<div style="width:240px;height:120px;background:linear-gradient(135deg,#2da44e,#1f6feb);' +
    'font:bold 26px sans-serif;color:#fff;display:flex;align-items:center;justify-content:center">CI 50/50 passed</div>')
  const png = await p.locator('div').screenshot()
  await p.close()
  return png
}

/** Ids of the conversation rows in the DOM, in order. */
const rowIds = async (p: Page): Promise<string[]> =>
  await p.locator('.conversation [role=listitem]').evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.id ?? ''))

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true })
  browser = await launchChromium()
  app = await buildTestApp()
  api = { baseUrl: await app.listen({ port: 0, host: '127.0.0.1' }) }
  demo = await seedDemo(api, 'demo', await drawPng())
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
  page.on('pageerror', (err) => { throw err })
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await app?.close()
})

describe('the session list', () => {
  it('shows sessions newest first, adds a created session without a reload, and filters', async () => {
    await page.goto(`${api.baseUrl}/`)
    await page.waitForURL('**/ui/')
    await page.locator('li[data-id="demo"]').waitFor()
    await expect.poll(() => page.locator('#live').getAttribute('data-state')).toBe('live')
    await call(api, 'POST', '/v1/sessions', { cwd: '/work/docs-site', id: 'docs', title: 'Rewrite the install guide' })
    await page.locator('li[data-id="docs"]').waitFor({ timeout: 5000 })
    expect(await page.locator('.session-list li').evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.id))).toEqual(['docs', 'demo'])
    expect(await page.locator('li[data-id="demo"] .counts').textContent()).toBe('15 entries · 10 messages')
    await shot(page, '01-session-list')

    await page.fill('#text-filter', 'flaky')
    await expect.poll(() => page.locator('.session-list li').count()).toBe(1)
    await page.fill('#text-filter', '')
    await page.selectOption('#cwd-filter', '/work/docs-site')
    await expect.poll(() => page.locator('.session-list li').evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.id))).toEqual(['docs'])
    await call(api, 'DELETE', '/v1/sessions/docs')
    await expect.poll(() => page.locator('.session-list li').count(), { timeout: 5000 }).toBe(0)
  }, STEP_MS)
})

describe('one session', () => {
  it('opens by its deep link and renders the conversation root to leaf', async () => {
    await page.goto(`${api.baseUrl}/ui/sessions/demo`)
    await page.locator('main[data-ready]').waitFor()
    const { ids } = demo
    // The leaf's branch: the tool result sits inside its call, the label is in the tree only.
    expect(await rowIds(page)).toEqual([ids.question, ids.answer, ids.thinkingChange, ids.modelChange, ids.call1, ids.fix, ids.branchSummary, ids.compaction, ids.after])
    const question = page.locator(`.conversation [data-id="${ids.question}"]`)
    expect(await question.locator('strong').textContent()).toBe('about once in ten runs')
    expect(await question.locator('pre code').textContent()).toBe('EEXIST: file already exists, mkdir /tmp/upload')
    const thinking = page.locator(`.conversation [data-id="${ids.answer}"] details`)
    expect(await thinking.evaluate((el) => (el as HTMLDetailsElement).open)).toBe(false)
    const tool = page.locator(`.conversation [data-id="${ids.call1}"] details.tool`)
    expect(await tool.locator('summary').textContent()).toContain('read')
    await tool.locator('summary').click()
    expect(await tool.locator('.result').textContent()).toContain("const dir = '/tmp/upload'")
    expect(await page.locator(`.conversation [data-id="${ids.modelChange}"]`).textContent()).toContain('model → anthropic/claude-sonnet-4-5')
    expect(await page.locator(`.conversation [data-id="${ids.thinkingChange}"]`).textContent()).toContain('thinking level → high')
    expect(await page.locator(`.conversation [data-id="${ids.compaction}"] .role`).textContent()).toBe('Compaction')
    expect(await page.locator(`.conversation [data-id="${ids.branchSummary}"] .role`).textContent()).toBe('Branch summary')
    expect(await page.locator('.totals').textContent()).toContain('$0.0243')
    expect(await page.locator(`.tree-row[data-id="${ids.fix}"] .badge`).textContent()).toBe('root cause')
    await shot(page, '02-session')
  }, STEP_MS)

  it('shows appended entries live; a reader scrolled up stays where they are, one at the end follows', async () => {
    const batch = Array.from({ length: 30 }, (_, i) => i % 2 === 0 ? user(`Step ${i}: run the suite again`) : assistant([{ type: 'text', text: `Run ${i} passed.` }]))
    const added = await append(api, 'demo', batch)
    await page.locator(`.conversation [data-id="${added.at(-1)}"]`).waitFor({ timeout: 5000 })
    // At the end: the list followed the new entries.
    const scroller = page.locator('.conversation')
    expect(await scroller.evaluate((el) => el.scrollTop + el.clientHeight >= el.scrollHeight - 8)).toBe(true)

    await scroller.evaluate((el) => { el.scrollTop = el.scrollHeight / 3 })
    await page.waitForTimeout(300)
    const before = await scroller.evaluate((el) => {
      const top = el.getBoundingClientRect().top
      const first = [...el.querySelectorAll<HTMLElement>('[role=listitem]')].find((row) => row.getBoundingClientRect().bottom > top)!
      return { scrollTop: el.scrollTop, id: first.dataset.id, y: first.getBoundingClientRect().top }
    })
    const more = await append(api, 'demo', [user('One more thing: add a regression test.'), assistant([{ type: 'text', text: 'Added `upload.parallel.test.ts`.' }])])
    await expect.poll(() => page.locator('.conversation [role=listitem]').first().getAttribute('aria-setsize'), { timeout: 5000 })
      .toBe(String(9 + added.length + more.length))
    const after = await scroller.evaluate((el, id) => ({ scrollTop: el.scrollTop, y: el.querySelector(`[data-id="${id}"]`)!.getBoundingClientRect().top }), before.id)
    expect(after).toEqual({ scrollTop: before.scrollTop, y: before.y })
    await shot(page, '03-live-append')
  }, STEP_MS)

  it('switches to another branch from the tree, and moves the session leaf there', async () => {
    const { ids } = demo
    await page.locator(`.tree-row[data-id="${ids.screenshotReply}"]`).click()
    await expect.poll(() => rowIds(page)).toEqual([ids.question, ids.answer, ids.thinkingChange, ids.modelChange, ids.call1, ids.fix, ids.screenshot, ids.screenshotReply])
    expect(new URL(page.url()).searchParams.get('leaf')).toBe(ids.screenshotReply)
    expect(await page.locator(`.tree-row[data-id="${ids.screenshot}"]`).getAttribute('class')).toContain('viewed')
    expect(await page.locator(`.tree-row[data-id="${ids.retry}"]`).getAttribute('class')).not.toContain('viewed')

    // An image from the blob endpoint, by ref: fetched with the page's credentials, shown from a blob: URL.
    const img = page.locator(`.conversation [data-id="${ids.screenshot}"] img.image`)
    await expect.poll(() => img.evaluate((el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth), { timeout: 5000 }).toBeGreaterThan(0)
    expect(await img.getAttribute('src')).toMatch(/^blob:/)
    await shot(page, '04-branch-and-image')

    await page.locator('button.move-leaf').click()
    await expect.poll(async () => (await call(api, 'GET', '/v1/sessions/demo')).leafId).toBe(ids.screenshotReply)
    await expect.poll(() => page.locator('.view-state').textContent()).toBe('Following the session leaf')
    expect(await page.locator(`.tree-row[data-id="${ids.screenshotReply}"] .leaf-badge`).count()).toBe(1)
  }, STEP_MS)

  it('shows the context the model sees at the chosen leaf', async () => {
    const { ids } = demo
    await page.locator(`.tree-row[data-id="${ids.after}"]`).click()
    await page.locator('button.tab-context').click()
    await expect.poll(() => page.locator('.context-summary').getAttribute('data-loaded')).toBe(ids.after)
    const context = await call(api, 'GET', `/v1/sessions/demo/context?leafId=${ids.after}`)
    expect(await page.locator('.context [role=listitem]').evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.role)))
      .toEqual(context.messages.map((m: { role: string }) => m.role))
    expect(context.messages[0].role).toBe('compactionSummary')
    expect(await page.locator('.context-state').textContent()).toContain('thinking levelhigh')
    expect(await page.locator('.context-state').textContent()).toContain('default: anthropic/claude-sonnet-4-5')
    await shot(page, '05-context')
    await page.locator('button.tab-conversation').click()
  }, STEP_MS)

  it('resumes by itself after the connection drops: reconnecting, then live, nothing missed or doubled', async () => {
    await page.locator('button.tab-conversation').click()
    await page.evaluate(() => {
      const states: string[] = []
      ;(window as unknown as { states: string[] }).states = states
      new MutationObserver(() => states.push(document.getElementById('live')!.dataset.state!)).observe(document.getElementById('live')!, { attributes: true })
    })
    // Back to following the session leaf, then cut every connection of the server.
    await page.locator(`.tree-row[data-id="${demo.ids.screenshotReply}"]`).click()
    app.server.closeAllConnections()
    await expect.poll(() => page.evaluate(() => (window as unknown as { states: string[] }).states)).toContain('reconnecting')
    const [late] = await append(api, 'demo', [user('Appended while the page was disconnected.')])
    await page.locator(`.conversation [data-id="${late}"]`).waitFor({ timeout: 10_000 })
    const states = await page.evaluate(() => (window as unknown as { states: string[] }).states)
    expect(states).toContain('reconnecting')
    expect(states.at(-1)).toBe('live')
    expect(await page.locator(`.conversation [data-id="${late}"]`).count()).toBe(1)
  }, STEP_MS)
})

describe('a 10,000-entry session', () => {
  it('renders only the rows in view, at the end and after scrolling to the top', async () => {
    const ids = await seedLong(api, 'long', 10_000)
    await page.goto(`${api.baseUrl}/ui/sessions/long`)
    await page.locator('main[data-ready]').waitFor({ timeout: 30_000 })
    await page.locator(`.conversation [data-id="${ids.at(-1)}"]`).waitFor()
    const rows = page.locator('.conversation [role=listitem]')
    expect(await rows.count()).toBeLessThanOrEqual(40)
    expect(await page.locator('.tree-row').count()).toBeLessThanOrEqual(60)
    expect(await rows.first().getAttribute('aria-setsize')).toBe('10000')
    await page.locator('.conversation').evaluate((el) => { el.scrollTop = 0 })
    await page.locator(`.conversation [data-id="${ids[0]}"]`).waitFor()
    expect(await rows.count()).toBeLessThanOrEqual(40)
    await shot(page, '06-ten-thousand')
  }, STEP_MS)
})

describe('layout and access', () => {
  it('fits a phone screen, with the tree one tab away', async () => {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true })
    await phone.goto(`${api.baseUrl}/ui/sessions/demo`)
    await phone.locator('main[data-ready]').waitFor()
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    expect(await phone.locator('.tree-pane').isVisible()).toBe(false)
    await shot(phone, '07-phone')
    await phone.locator('button.tab-tree').click()
    expect(await phone.locator('.tree-pane').isVisible()).toBe(true)
    expect(await phone.locator('.conversation-pane').isVisible()).toBe(false)
    await shot(phone, '08-phone-tree')
    await phone.close()
  }, STEP_MS)

  it('follows a dark system theme', async () => {
    await page.emulateMedia({ colorScheme: 'dark' })
    await page.goto(`${api.baseUrl}/ui/sessions/demo`)
    await page.locator('main[data-ready]').waitFor()
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor)
    const [r, g, b] = background.match(/\d+/g)!.map(Number)
    expect(r! + g! + b!).toBeLessThan(120)
    await shot(page, '09-dark')
    await page.emulateMedia({ colorScheme: 'light' })
  }, STEP_MS)

  it('is reachable from the keyboard: tab to the tree, arrows move, Enter chooses', async () => {
    await page.goto(`${api.baseUrl}/ui/sessions/demo`)
    await page.locator('main[data-ready]').waitFor()
    const focused: string[] = []
    for (let i = 0; i < 12 && !focused.includes('tree-row'); i++) {
      await page.keyboard.press('Tab')
      focused.push(await page.evaluate(() => (document.activeElement as HTMLElement).className.split(' ')[0] ?? document.activeElement!.tagName))
    }
    expect(focused).toContain('tab')
    expect(focused).toContain('scroller')
    expect(focused.at(-1)).toBe('tree-row')
    // Tabbing into the tree lands on the row of the session's leaf, which the page revealed.
    const first = await page.evaluate(() => (document.activeElement as HTMLElement).dataset.id)
    expect(first).toBe((await call(api, 'GET', '/v1/sessions/demo')).leafId)
    await page.keyboard.press('Home')
    await page.keyboard.press('ArrowDown')
    const second = await page.evaluate(() => (document.activeElement as HTMLElement).dataset.id)
    expect(second).toBe(demo.ids.answer)
    await page.keyboard.press('Enter')
    await expect.poll(() => rowIds(page)).toEqual([demo.ids.question, demo.ids.answer])
  }, STEP_MS)

  it('shows message text as text, never as HTML', async () => {
    const [hostile] = await append(api, 'demo', [user('<img src=x onerror="window.pwned=1"><script>window.pwned=2</script> [link](javascript:alert(1))')])
    await page.goto(`${api.baseUrl}/ui/sessions/demo?leaf=${hostile}`)
    const row = page.locator(`.conversation [data-id="${hostile}"]`)
    await row.waitFor()
    expect(await row.locator('.md').textContent()).toContain('<img src=x onerror="window.pwned=1"><script>')
    expect(await row.locator('img, script, a').count()).toBe(0)
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined()
  }, STEP_MS)
})

describe('with tokens on', () => {
  let tokens: TokenFixture
  let secured: App
  let base: string

  beforeAll(async () => {
    tokens = await tokenFixture()
    secured = await buildTestApp({ tokens: await tokens.load() })
    base = await secured.listen({ port: 0, host: '127.0.0.1' })
    await call({ baseUrl: base, headers: bearer(tokens.secrets.write) }, 'POST', '/v1/sessions', { cwd: '/work/secure', id: 'secure', title: 'Behind a token' })
    await append({ baseUrl: base, headers: bearer(tokens.secrets.write) }, 'secure', [user('Hello behind a token'), assistant([{ type: 'text', text: 'Hello.' }])])
  }, 60_000)
  afterAll(async () => {
    await secured?.close()
    tokens?.cleanup()
  })

  it('asks for a token on 401, then shows the session live with it, and again after a reload', async () => {
    const p = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    const streams: string[] = []
    p.on('request', (req) => { if (req.url().includes('/events')) streams.push(req.url()) })
    await p.goto(`${base}/ui/sessions/secure`)
    await p.locator('#token-input').waitFor()
    expect(await p.locator('.prompt h1').textContent()).toBe('This server needs an access token')
    await shot(p, '10-token-prompt')

    await p.fill('#token-input', tokens.secrets.read)
    await p.locator('.token-form button[type=submit]').click()
    await p.locator('main[data-ready]').waitFor()
    expect(await p.locator('.session-head .title').textContent()).toBe('Behind a token')
    await expect.poll(() => p.locator('#live').getAttribute('data-state')).toBe('live')
    const [live] = await append({ baseUrl: base, headers: bearer(tokens.secrets.write) }, 'secure', [user('Arrives over a stream opened with ?access_token=')])
    await p.locator(`.conversation [data-id="${live}"]`).waitFor({ timeout: 5000 })
    expect(streams.some((url) => new URL(url).searchParams.get('access_token') === tokens.secrets.read)).toBe(true)

    await p.reload()
    await p.locator('main[data-ready]').waitFor()
    expect(await p.locator('#token-input').count()).toBe(0)
    expect(await p.locator(`.conversation [data-id="${live}"]`).count()).toBe(1)
    await shot(p, '11-token-reload')

    // A read token cannot move the leaf: the page says so instead of failing silently.
    await p.locator('.tree-row').first().click()
    await p.locator('button.move-leaf').click()
    await expect.poll(() => p.locator('#notice').textContent()).toBe('Moving the leaf needs a token with the write scope.')
    await p.close()
  }, STEP_MS)
})
