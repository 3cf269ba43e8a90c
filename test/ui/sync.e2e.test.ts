/// <reference lib="dom" />
/**
 * A session an agent writes into its own directory, followed by `session-store sync`, grows on
 * the dashboard in a real browser (Chromium through playwright-core): its inline images, stored
 * by the server as blobs on import and on append, show as pictures, and lines the agent appends
 * appear live without a reload.
 */
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { agentDir, append, assistant, header, lines, user, writeSession, type AgentDir } from '../cli/agent-dir.js'
import { startCli, type CliRun } from '../cli/helpers.js'
import { closeStage, openStage, rowIds, shot, watch, type Stage } from './stage.js'

let stage: Stage
let page: Page
let dir: AgentDir
let sync: CliRun

/** A PNG drawn by the browser, as base64. */
async function drawPng (text: string, color: string): Promise<string> {
  const p = await stage.browser.newPage()
  await p.setContent(`<div style="width:200px;height:100px;background:${color};font:bold 22px sans-serif;color:#fff;display:flex;align-items:center;justify-content:center">${text}</div>`)
  const png = await p.locator('div').screenshot()
  await p.close()
  return png.toString('base64')
}

const withImage = (id: string, parentId: string | null, caption: string, data: string) =>
  user(id, parentId, [{ type: 'text', text: caption }, { type: 'image', data, mimeType: 'image/png' }])

beforeAll(async () => {
  stage = await openStage()
  page = watch(await stage.browser.newPage({ viewport: { width: 1280, height: 800 } }), stage.errors)
  dir = agentDir()
}, 120_000)
afterAll(async () => {
  sync?.child.kill('SIGKILL')
  await sync?.exited
  dir?.cleanup()
  await closeStage(stage)
})

/** Every picture of the conversation has loaded (decoded, with a width). */
const picturesShown = async (): Promise<number[]> =>
  await page.locator('.conversation img.image').evaluateAll((els) => els.map((el) => (el as HTMLImageElement).complete ? (el as HTMLImageElement).naturalWidth : 0))

it('shows a synced session growing, with its images', async () => {
  const first = await drawPng('first picture', '#1f6feb')
  const path = writeSession(dir, '--work-synced--', 'synced', lines(header('synced', '/work/synced', { title: 'Synced from pi' }), withImage('u1', null, 'What is this?', first), assistant('a1', 'u1', 'A blue picture.')))
  sync = startCli(['sync', dir.sessions, '--server', stage.api.baseUrl, '--interval', '100'])

  await page.goto(`${stage.api.baseUrl}/ui/`)
  await page.locator('li[data-id="synced"]').waitFor({ timeout: 10_000 })
  await page.goto(`${stage.api.baseUrl}/ui/sessions/synced`)
  await page.locator('main[data-ready]').waitFor()
  expect(await rowIds(page)).toEqual(['u1', 'a1'])
  await expect.poll(picturesShown, { timeout: 5000 }).toEqual([200])
  expect(await page.locator('.conversation img.image').getAttribute('src')).toMatch(/^blob:/)
  await shot(page, 'sync-01-imported')

  // The agent goes on writing: the page follows, the new picture included.
  const second = await drawPng('second picture', '#2da44e')
  append(path, withImage('u2', 'a1', 'And this one?', second), assistant('a2', 'u2', 'A green one.'))
  await expect.poll(() => rowIds(page), { timeout: 5000 }).toEqual(['u1', 'a1', 'u2', 'a2'])
  await expect.poll(picturesShown, { timeout: 5000 }).toEqual([200, 200])
  await shot(page, 'sync-02-grown')
}, 60_000)
