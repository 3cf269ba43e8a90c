/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The dashboard in a real browser (Debian's Chromium through playwright-core) against a real
 * listening server: the session list live from /v1/events, a session opened by its deep link,
 * entries appended over the API appearing live without moving the reader, a branch switch in
 * the tree and a leaf move, an image from a blob, the context view, and an automatic resume
 * after the connection drops. Each step saves a screenshot under test/artifacts/. Without
 * Chromium every test here fails (see browser.ts). Layout, keyboard, long sessions and tokens:
 * dashboard-access.e2e.test.ts.
 */
import type { Page, Request } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { append, assistant, call, user } from './seed.js'
import { closeStage, openStage, rowIds, shot, watch, type Stage } from './stage.js'

const STEP_MS = 60_000

let stage: Stage
let page: Page
/** Errors a test provokes on purpose; emptied after each test. */
const provoked: RegExp[] = []

beforeAll(async () => {
  stage = await openStage()
  page = watch(await stage.browser.newPage({ viewport: { width: 1280, height: 800 } }), stage.errors, provoked)
}, 120_000)
afterEach(() => {
  provoked.length = 0
  expect(stage.errors.splice(0)).toEqual([])
})
afterAll(async () => { await closeStage(stage) })

const listIds = async (): Promise<string[]> =>
  await page.locator('.session-list li').evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.id ?? ''))
/** The sessions of the search hits shown, each once. */
const hitSessions = async (): Promise<string[]> =>
  await page.locator('.hit-list li').evaluateAll((els) => [...new Set(els.map((el) => (el as HTMLElement).dataset.id ?? ''))])

describe('the session list', () => {
  it('shows sessions by last change, follows created, updated and deleted sessions without a reload, and filters', async () => {
    const { api } = stage
    await page.goto(`${api.baseUrl}/`)
    await page.waitForURL('**/ui/')
    await page.locator('li[data-id="demo"]').waitFor()
    await expect.poll(() => page.locator('#live').getAttribute('data-state')).toBe('live')
    await call(api, 'POST', '/v1/sessions', { cwd: '/work/docs-site', id: 'docs', title: 'Rewrite the install guide' })
    await page.locator('li[data-id="docs"]').waitFor({ timeout: 5000 })
    expect(await listIds()).toEqual(['docs', 'demo'])
    expect(await page.locator('li[data-id="demo"] .counts').textContent()).toBe('15 entries · 10 messages')
    await shot(page, '01-session-list')

    // An append changes the demo session last: it moves to the top with its new counts.
    await append(api, 'demo', [user('Is the fix in?')])
    await expect.poll(listIds, { timeout: 5000 }).toEqual(['demo', 'docs'])
    await expect.poll(() => page.locator('li[data-id="demo"] .counts').textContent()).toBe('16 entries · 11 messages')

    // The search box searches content: the hits replace the list.
    await page.fill('#text-filter', 'flaky') // in the title
    await expect.poll(hitSessions).toEqual(['demo'])
    await page.fill('#text-filter', 'EEXIST') // in the first message
    await expect.poll(hitSessions).toEqual(['demo'])
    await page.fill('#text-filter', 'install guide')
    await expect.poll(hitSessions).toEqual(['docs'])
    await page.fill('#text-filter', '')
    await expect.poll(listIds).toEqual(['demo', 'docs'])
    await page.selectOption('#cwd-filter', '/work/docs-site')
    await expect.poll(listIds).toEqual(['docs'])
    await call(api, 'DELETE', '/v1/sessions/docs')
    await expect.poll(() => page.locator('.session-list li').count(), { timeout: 5000 }).toBe(0)
  }, STEP_MS)
})

describe('usage', () => {
  it('shows what the tenant stores above the list, and counts again as sessions change', async () => {
    const { api } = stage
    await page.goto(`${api.baseUrl}/ui/`)
    await page.locator('#usage .usage-sessions').waitFor()
    expect(await page.locator('#usage .usage-label').textContent()).toBe('Storage')
    const usage = await call(api, 'GET', '/v1/usage')
    expect(await page.locator('#usage .usage-sessions').textContent()).toBe(`${usage.sessions as number} ${usage.sessions === 1 ? 'session' : 'sessions'}`)
    expect(await page.locator('#usage .usage-blobs').textContent()).toMatch(new RegExp(`^${usage.blobs as number} blobs? \\(`))
    await call(api, 'POST', '/v1/sessions', { cwd: '/work/usage', id: 'usage-one' })
    await expect.poll(() => page.locator('#usage .usage-sessions').textContent(), { timeout: 10_000 }).toBe(`${(usage.sessions as number) + 1} sessions`)
    await shot(page, '02-usage')
    await call(api, 'DELETE', '/v1/sessions/usage-one')
  }, STEP_MS)
})

describe('one session', () => {
  it('opens by its deep link and renders the conversation root to leaf', async () => {
    const { ids } = stage.demo
    await page.goto(`${stage.api.baseUrl}/ui/sessions/demo`)
    await page.locator('main[data-ready]').waitFor()
    const leafAsked = (await call(stage.api, 'GET', '/v1/sessions/demo')).leafId
    // The leaf's branch: the tool result sits inside its call, the label is in the tree only.
    expect(await rowIds(page)).toEqual([ids.question, ids.answer, ids.thinkingChange, ids.modelChange, ids.call1, ids.fix, ids.branchSummary, ids.compaction, ids.after, leafAsked])
    const question = page.locator(`.conversation [data-id="${ids.question}"]`)
    expect(await question.locator('.role').textContent()).toBe('User')
    expect(await question.locator('strong').textContent()).toBe('about once in ten runs')
    expect(await question.locator('pre code').textContent()).toBe('EEXIST: file already exists, mkdir /tmp/upload')
    expect(await page.locator(`.conversation [data-id="${ids.fix}"] ol li`).allTextContents()).toEqual(['worker A creates it', 'worker B fails with EEXIST'])
    const thinking = page.locator(`.conversation [data-id="${ids.answer}"] details`)
    expect(await thinking.evaluate((el) => (el as HTMLDetailsElement).open)).toBe(false)
    expect(await page.locator(`.conversation [data-id="${ids.answer}"] .role`).textContent()).toBe('Assistant')
    const tool = page.locator(`.conversation [data-id="${ids.call1}"] details.tool`)
    expect(await tool.evaluate((el) => (el as HTMLDetailsElement).open)).toBe(false)
    expect(await tool.locator('.result').isVisible()).toBe(false)
    expect(await tool.locator('summary').textContent()).toContain('read')
    await tool.locator('summary').click()
    expect(await tool.locator('.result').isVisible()).toBe(true)
    expect(await tool.locator('.result').textContent()).toContain("const dir = '/tmp/upload'")
    expect(await page.locator(`.conversation [data-id="${ids.modelChange}"]`).textContent()).toContain('model → anthropic/claude-sonnet-4-5')
    expect(await page.locator(`.conversation [data-id="${ids.thinkingChange}"]`).textContent()).toContain('thinking level → high')
    expect(await page.locator(`.conversation [data-id="${ids.compaction}"] .role`).textContent()).toBe('Compaction')
    expect(await page.locator(`.conversation [data-id="${ids.branchSummary}"] .role`).textContent()).toBe('Branch summary')
    // Every assistant message of every branch: 812 + 1,904 + 2,210 + 812 + 812 in, and so on.
    expect(await page.locator('.totals').textContent()).toBe('6,550 in · 399 out · 0 cache read · $0.0243')
    // The tree: the active path marked, the branch not on it unmarked, the label on its entry.
    expect(await page.locator('.tree-row.active').evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.id)))
      .toEqual([ids.question, ids.answer, ids.thinkingChange, ids.modelChange, ids.call1, ids.result1, ids.fix, ids.branchSummary, ids.compaction, ids.after, leafAsked])
    expect(await page.locator(`.tree-row[data-id="${ids.fix}"] .badge`).textContent()).toBe('root cause')
    expect(await page.locator('.tree-row').count()).toBe(16)
    await shot(page, '02-session')
  }, STEP_MS)

  it('shows appended entries live; a reader scrolled up stays where they are, one at the end follows', async () => {
    const batch = Array.from({ length: 30 }, (_, i) => i % 2 === 0 ? user(`Step ${i}: run the suite again`) : assistant([{ type: 'text', text: `Run ${i} passed.` }]))
    const shown = (await rowIds(page)).length
    const added = await append(stage.api, 'demo', batch)
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
    const more = await append(stage.api, 'demo', [user('One more thing: add a regression test.'), assistant([{ type: 'text', text: 'Added `upload.parallel.test.ts`.' }])])
    await expect.poll(() => page.locator('.conversation [role=listitem]').first().getAttribute('aria-setsize'), { timeout: 5000 })
      .toBe(String(shown + added.length + more.length))
    const after = await scroller.evaluate((el, id) => ({ scrollTop: el.scrollTop, y: el.querySelector(`[data-id="${id}"]`)!.getBoundingClientRect().top }), before.id)
    expect(after).toEqual({ scrollTop: before.scrollTop, y: before.y })
    await shot(page, '03-live-append')
  }, STEP_MS)

  it('switches to another branch from the tree, and moves the session leaf there', async () => {
    const { ids } = stage.demo
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
    await expect.poll(async () => (await call(stage.api, 'GET', '/v1/sessions/demo')).leafId).toBe(ids.screenshotReply)
    await expect.poll(() => page.locator('.view-state').textContent()).toBe('Following the session leaf')
    expect(await page.locator(`.tree-row[data-id="${ids.screenshotReply}"] .leaf-badge`).count()).toBe(1)
    expect(await page.locator(`.tree-row[data-id="${ids.screenshot}"]`).getAttribute('class')).toContain('active')
    expect(await page.locator(`.tree-row[data-id="${ids.after}"]`).getAttribute('class')).not.toContain('active')
  }, STEP_MS)

  it('shows the context the model sees at the chosen leaf', async () => {
    const { ids } = stage.demo
    await page.locator(`.tree-row[data-id="${ids.after}"]`).click()
    await page.locator('button.tab-context').click()
    await expect.poll(() => page.locator('.context-summary').getAttribute('data-loaded')).toBe(ids.after)
    const context = await call(stage.api, 'GET', `/v1/sessions/demo/context?leafId=${ids.after}`)
    expect(await page.locator('.context [role=listitem]').evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.role)))
      .toEqual(context.messages.map((m: { role: string }) => m.role))
    expect(context.messages[0].role).toBe('compactionSummary')
    expect(await page.locator('.context-state').textContent()).toContain('thinking levelhigh')
    expect(await page.locator('.context-state').textContent()).toContain('default: anthropic/claude-sonnet-4-5')
    await shot(page, '05-context')
    await page.locator('button.tab-conversation').click()
  }, STEP_MS)

  it('resumes by itself after the connection drops: reconnecting, then live, from where it was, nothing missed or doubled', async () => {
    const { api, app, demo } = stage
    await page.evaluate(() => {
      const states: string[] = []
      ;(window as unknown as { states: string[] }).states = states
      new MutationObserver(() => states.push(document.getElementById('live')!.dataset.state!)).observe(document.getElementById('live')!, { attributes: true })
    })
    // Back to following the session leaf.
    await page.locator(`.tree-row[data-id="${demo.ids.screenshotReply}"]`).click()
    const seen = (await call(api, 'GET', '/v1/sessions/demo')).entryCount as number
    const streams: Request[] = []
    const reloads: string[] = []
    page.on('request', (req) => {
      if (req.url().includes('/v1/sessions/demo/events')) streams.push(req)
      if (req.url().includes('/v1/sessions/demo/entries')) reloads.push(req.url())
    })
    // Cut every connection, and keep the stream from coming back until an entry was appended.
    // The browser reports the cut stream and the refused ones: that much is expected here.
    provoked.push(/net::ERR_\w+ \S+\/v1\/sessions\/demo\/events\?/)
    const blocked = '**/v1/sessions/demo/events**'
    await page.route(blocked, (route) => route.abort())
    app.server.closeAllConnections()
    await expect.poll(() => page.evaluate(() => (window as unknown as { states: string[] }).states)).toContain('reconnecting')
    const [late] = await append(api, 'demo', [user('Appended while the page was disconnected.')])
    await page.unroute(blocked)
    await page.locator(`.conversation [data-id="${late}"]`).waitFor({ timeout: 10_000 })
    await expect.poll(() => page.evaluate(() => (window as unknown as { states: string[] }).states.at(-1))).toBe('live')
    expect(await page.locator(`.conversation [data-id="${late}"]`).count()).toBe(1)
    expect(await page.locator('.session-head .counts').textContent()).toMatch(new RegExp(`^${seen + 1} entries`))
    // It came over a stream resumed after the last entry seen, not from reloading the entries.
    expect(reloads).toEqual([])
    const resumed = streams.at(-1)!
    expect((await resumed.allHeaders())['last-event-id'] ?? new URL(resumed.url()).searchParams.get('after')).toBe(String(seen))
  }, STEP_MS)
})
