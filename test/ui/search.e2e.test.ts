/// <reference lib="dom" />
/**
 * Search in the dashboard, in a real browser against a real server: a word said once in the
 * middle of a long session is found from the search box, its snippet shows the match marked,
 * and opening the hit lands on that entry, scrolled into view and marked. A hit on another
 * branch opens that branch.
 */
import type { Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { call, type Api } from './seed.js'
import { closeStage, openStage, shot, watch, type Stage } from './stage.js'

const STEP_MS = 90_000

let stage: Stage
let page: Page

beforeAll(async () => {
  stage = await openStage()
  page = watch(await stage.browser.newPage({ viewport: { width: 1280, height: 800 } }), stage.errors)
}, 120_000)
afterEach(() => { expect(stage.errors.splice(0)).toEqual([]) })
afterAll(async () => { await closeStage(stage) })

/** A linear session of `count` messages; entry `at` says `word`, and a side branch off entry 10 says `side`. */
async function seedHaystack (api: Api, id: string, count: number, at: number, word: string, side: string): Promise<string[]> {
  const start = Date.parse('2026-02-01T00:00:00.000Z')
  const lines = [JSON.stringify({ type: 'session', version: 3, id, timestamp: new Date(start).toISOString(), cwd: '/work/haystack' })]
  const ids: string[] = []
  for (let i = 0; i < count; i++) {
    const text = i === at ? `The upload race was in the ${word} lock, fixed now` : `Step ${i} checks the result of step ${i - 1}`
    const message = i % 2 === 0
      ? { role: 'user', content: text, timestamp: start + i }
      : { role: 'assistant', content: [{ type: 'text', text }], provider: 'openai', model: 'gpt-4o', stopReason: 'stop', timestamp: start + i }
    ids.push(`h${i.toString(16).padStart(7, '0')}`)
    lines.push(JSON.stringify({ type: 'message', id: ids[i], parentId: i === 0 ? null : ids[i - 1], timestamp: new Date(start + i).toISOString(), message }))
  }
  lines.push(JSON.stringify({ type: 'message', id: 'side0001', parentId: ids[10], timestamp: new Date(start + 5).toISOString(), message: { role: 'user', content: `abandoned ${side} idea`, timestamp: start } }))
  lines.push(JSON.stringify({ type: 'message', id: 'main0001', parentId: ids[count - 1], timestamp: new Date(start + count).toISOString(), message: { role: 'user', content: 'the end', timestamp: start } }))
  await call(api, 'POST', '/v1/sessions/import', lines.join('\n') + '\n', 'application/x-ndjson')
  return ids
}

/** True when the element's box is inside the conversation's visible area. */
const inView = async (selector: string): Promise<boolean> => await page.evaluate((sel) => {
  const el = document.querySelector(sel)
  const scroller = document.querySelector('.conversation')
  if (el === null || scroller === null) return false
  const a = el.getBoundingClientRect()
  const b = scroller.getBoundingClientRect()
  return a.top >= b.top - 1 && a.top < b.bottom && a.height > 0
}, selector)

describe('search in the dashboard', () => {
  it('finds a word said in the middle of a long session and lands on that entry', async () => {
    const ids = await seedHaystack(stage.api, 'haystack', 3000, 1501, 'quetzalcoatl', 'pterodactyl')
    const target = ids[1501] as string
    await page.goto(`${stage.api.baseUrl}/ui/`)
    await page.locator('li[data-id="haystack"]').waitFor()
    await page.fill('#text-filter', 'quetzalcoatl')
    const hit = page.locator(`.hit-list li[data-entry="${target}"]`)
    await hit.waitFor({ timeout: 10_000 })
    expect(await page.locator('.hit-list li').count()).toBe(1)
    expect(await hit.locator('mark').allTextContents()).toEqual(['quetzalcoatl'])
    expect(await hit.locator('.snippet').textContent()).toBe('The upload race was in the quetzalcoatl lock, fixed now')
    await shot(page, '20-search-hits')

    await hit.locator('a').click()
    await page.waitForURL(`**/ui/sessions/haystack?entry=${target}`)
    await page.locator('main[data-ready]').waitFor({ timeout: 30_000 })
    const found = `.conversation .entry.found[data-id="${target}"]`
    await page.locator(found).waitFor({ timeout: 10_000 })
    await expect.poll(async () => await inView(found), { timeout: 5000 }).toBe(true)
    expect(await page.locator('.entry.found').count()).toBe(1)
    expect(await page.locator(found).getAttribute('aria-current')).toBe('true')
    // The rows near the end are not in the DOM: the view is at the entry, not at the leaf.
    expect(await page.locator(`.conversation [data-id="${ids.at(-1)}"]`).count()).toBe(0)
    await shot(page, '21-search-landed')
  }, STEP_MS)

  it('opens a hit on another branch on that branch', async () => {
    await page.goto(`${stage.api.baseUrl}/ui/`)
    await page.fill('#text-filter', 'pterodactyl')
    const hit = page.locator('.hit-list li[data-entry="side0001"] a')
    await hit.waitFor({ timeout: 10_000 })
    await hit.click()
    await page.locator('main[data-ready]').waitFor({ timeout: 30_000 })
    await page.locator('.conversation .entry.found[data-id="side0001"]').waitFor({ timeout: 10_000 })
    expect(new URL(page.url()).searchParams.get('leaf')).toBe('side0001')
    expect(await page.locator('.view-state').textContent()).toContain('Viewing another branch')
  }, STEP_MS)
})
