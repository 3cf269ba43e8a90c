/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The dashboard in Chromium, the rest of what makes it usable: a 10,000-entry session kept to a
 * few DOM rows, the phone layout (list, conversation and tree), dark mode, the keyboard,
 * message text that stays text, and a server with tokens on (the prompt on 401, the token kept
 * in sessionStorage and sent as a header and on the streams, a reload with it). Each step saves a
 * screenshot under test/artifacts/.
 */
import type { Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'
import { bearer, tokenFixture, type TokenFixture } from '../helpers/tokens.js'
import { append, assistant, call, seedLong, user } from './seed.js'
import { closeStage, openStage, rowIds, shot, watch, type Stage } from './stage.js'

const STEP_MS = 60_000

let stage: Stage
let page: Page

beforeAll(async () => {
  stage = await openStage()
  page = watch(await stage.browser.newPage({ viewport: { width: 1280, height: 800 } }), stage.errors)
}, 120_000)
afterEach(() => { expect(stage.errors.splice(0)).toEqual([]) })
afterAll(async () => { await closeStage(stage) })

describe('a 10,000-entry session', () => {
  it('renders only the rows in view, at the end and after scrolling to the top', async () => {
    const ids = await seedLong(stage.api, 'long', 10_000)
    await page.goto(`${stage.api.baseUrl}/ui/sessions/long`)
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
  it('fits a phone screen: the list, the conversation, and the tree one tab away', async () => {
    const { api, demo } = stage
    const phone = watch(await stage.browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true }), stage.errors)
    const fits = async (): Promise<boolean> => await phone.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)
    await phone.goto(`${api.baseUrl}/ui/`)
    await phone.locator('li[data-id="demo"]').waitFor()
    expect(await fits()).toBe(true)
    await shot(phone, '07-phone-list')

    await phone.locator('li[data-id="demo"] a').click()
    await phone.locator('main[data-ready]').waitFor()
    expect(await fits()).toBe(true)
    expect(await phone.locator('.tree-pane').isVisible()).toBe(false)
    await phone.locator(`.conversation [data-id="${demo.ids.after}"]`).waitFor()
    await shot(phone, '08-phone')

    // The tree, hidden while the page loaded, fills its pane once shown and shows the leaf.
    await phone.locator('button.tab-tree').click()
    expect(await phone.locator('.tree-pane').isVisible()).toBe(true)
    expect(await phone.locator('.conversation-pane').isVisible()).toBe(false)
    await expect.poll(() => phone.locator('.tree-row').count()).toBe(15)
    expect(await phone.locator(`.tree-row.leaf[data-id="${demo.ids.after}"]`).isVisible()).toBe(true)
    await shot(phone, '09-phone-tree')
    await phone.locator(`.tree-row[data-id="${demo.ids.screenshotReply}"]`).click()
    await phone.locator('button.tab-conversation').click()
    await expect.poll(() => rowIds(phone)).toContain(demo.ids.screenshot)
    await phone.close()
  }, STEP_MS)

  it('keeps the end of the branch in view while its rows grow, even as a scroll event comes in', async () => {
    await page.goto(`${stage.api.baseUrl}/ui/sessions/demo?leaf=${stage.demo.ids.screenshotReply}`)
    await page.locator('main[data-ready]').waitFor()
    const scroller = page.locator('.conversation')
    const atEnd = async (): Promise<boolean> => await scroller.evaluate((el) => el.scrollTop + el.clientHeight >= el.scrollHeight - 8)
    await expect.poll(atEnd).toBe(true)
    // What an image loading in the last row does when the browser's own scroll event (a clamp
    // as rows settle) arrives after the row grew and before the row was measured.
    await scroller.evaluate((el) => {
      const grow = document.createElement('div')
      grow.style.height = '200px'
      el.querySelector('[role=listitem]:last-child')!.append(grow)
      el.dispatchEvent(new Event('scroll'))
    })
    await expect.poll(atEnd).toBe(true)
  }, STEP_MS)

  it('follows the system theme, light or dark', async () => {
    const brightness = async (): Promise<number> => {
      const [r, g, b] = (await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).match(/\d+/g)!.map(Number)
      return r! + g! + b!
    }
    await page.emulateMedia({ colorScheme: 'light' })
    await page.goto(`${stage.api.baseUrl}/ui/sessions/demo?leaf=${stage.demo.ids.screenshotReply}`)
    await page.locator('main[data-ready]').waitFor()
    expect(await brightness()).toBeGreaterThan(700)
    await page.emulateMedia({ colorScheme: 'dark' })
    expect(await brightness()).toBeLessThan(120)
    // Opened at the end of the branch, and still there once the image has loaded.
    const img = page.locator(`.conversation [data-id="${stage.demo.ids.screenshot}"] img.image`)
    await expect.poll(() => img.evaluate((el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth), { timeout: 5000 }).toBeGreaterThan(0)
    await expect.poll(() => page.locator('.conversation').evaluate((el) => el.scrollTop + el.clientHeight >= el.scrollHeight - 8)).toBe(true)
    await shot(page, '10-dark')
    await page.emulateMedia({ colorScheme: 'light' })
  }, STEP_MS)

  it('is reachable from the keyboard: tab to the tree, arrows move, Enter chooses', async () => {
    await page.goto(`${stage.api.baseUrl}/ui/sessions/demo`)
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
    expect(first).toBe((await call(stage.api, 'GET', '/v1/sessions/demo')).leafId)
    await page.keyboard.press('Home')
    await page.keyboard.press('ArrowDown')
    const second = await page.evaluate(() => (document.activeElement as HTMLElement).dataset.id)
    expect(second).toBe(stage.demo.ids.answer)
    await page.keyboard.press('Enter')
    await expect.poll(() => rowIds(page)).toEqual([stage.demo.ids.question, stage.demo.ids.answer])
  }, STEP_MS)

  it('shows message text as text, never as HTML', async () => {
    const [hostile] = await append(stage.api, 'demo', [user('<img src=x onerror="window.pwned=1"><script>window.pwned=2</script> [link](javascript:alert(1))')])
    await page.goto(`${stage.api.baseUrl}/ui/sessions/demo?leaf=${hostile}`)
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
    // The 401s before a token is given, and the 403 of the leaf move, are provoked here.
    const p = watch(await stage.browser.newPage({ viewport: { width: 1280, height: 800 } }), stage.errors, [/status of 40[13]/])
    const streams: string[] = []
    const authorizations = new Set<string | undefined>()
    p.on('request', (req) => {
      if (req.url().includes('/events')) streams.push(req.url())
      else if (new URL(req.url()).pathname.startsWith('/v1/')) authorizations.add(req.headers().authorization)
    })
    // The list and a session alike: a prompt, never a blank page.
    await p.goto(`${base}/ui/`)
    await p.locator('#token-input').waitFor()
    expect(await p.locator('.prompt h1').textContent()).toBe('This server needs an access token')
    await p.goto(`${base}/ui/sessions/secure`)
    await p.locator('#token-input').waitFor()
    expect(await p.locator('.prompt h1').textContent()).toBe('This server needs an access token')
    await shot(p, '11-token-prompt')

    // A wrong token: the prompt again, saying why.
    await p.fill('#token-input', 'not-a-token')
    await p.locator('.token-form button[type=submit]').click()
    await expect.poll(() => p.locator('.prompt .reason').textContent()).toMatch(/token/i)
    expect(await p.locator('#token-input').isVisible()).toBe(true)

    await p.fill('#token-input', tokens.secrets.read)
    await p.locator('.token-form button[type=submit]').click()
    await p.locator('main[data-ready]').waitFor()
    expect(await p.locator('.session-head .title').textContent()).toBe('Behind a token')
    await expect.poll(() => p.locator('#live').getAttribute('data-state')).toBe('live')
    const [live] = await append({ baseUrl: base, headers: bearer(tokens.secrets.write) }, 'secure', [user('Arrives over a stream opened with ?access_token=')])
    await p.locator(`.conversation [data-id="${live}"]`).waitFor({ timeout: 5000 })
    expect(streams.some((url) => new URL(url).searchParams.get('access_token') === tokens.secrets.read)).toBe(true)
    expect(authorizations).toContain(`Bearer ${tokens.secrets.read}`)
    // Kept for this tab only.
    expect(await p.evaluate(() => [sessionStorage.getItem('session-store.token'), localStorage.length])).toEqual([tokens.secrets.read, 0])

    await p.reload()
    await p.locator('main[data-ready]').waitFor()
    expect(await p.locator('#token-input').count()).toBe(0)
    expect(await p.locator(`.conversation [data-id="${live}"]`).count()).toBe(1)
    await shot(p, '12-token-reload')

    // The list, over /v1/events with the token in the query.
    await p.locator('a.brand').click()
    await p.locator('li[data-id="secure"]').waitFor()
    await expect.poll(() => p.locator('#live').getAttribute('data-state')).toBe('live')
    expect(streams.some((url) => new URL(url).pathname === '/v1/events' && new URL(url).searchParams.get('access_token') === tokens.secrets.read)).toBe(true)

    // A read token cannot move the leaf: the page says so instead of failing silently.
    await p.goto(`${base}/ui/sessions/secure`)
    await p.locator('main[data-ready]').waitFor()
    await p.locator('.tree-row').first().click()
    await p.locator('button.move-leaf').click()
    await expect.poll(() => p.locator('#notice').textContent()).toBe('Moving the leaf needs a token with the write scope.')

    // The Token button swaps in a write token, and then the leaf moves.
    const first = await p.locator('.tree-row').first().getAttribute('data-id')
    await p.locator('#token-button').click()
    await p.fill('#token-input', tokens.secrets.write)
    await p.locator('.token-form button[type=submit]').click()
    await p.locator('main[data-ready]').waitFor()
    await p.locator(`.tree-row[data-id="${first}"]`).click()
    await p.locator('button.move-leaf').click()
    await expect.poll(async () => (await call({ baseUrl: base, headers: bearer(tokens.secrets.read) }, 'GET', '/v1/sessions/secure')).leafId).toBe(first)
    await expect.poll(() => p.locator('.view-state').textContent()).toBe('Following the session leaf')
    await p.close()
  }, STEP_MS)
})
