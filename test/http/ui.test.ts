/**
 * The dashboard's pages as HTTP answers: `/` redirects to `/ui/`, the files of `ui/` are served
 * with a strict Content-Security-Policy, `/ui/sessions/{id}` answers the same page (deep links),
 * the pages are public with tokens on while the API is not, and none of it reaches the OpenAPI
 * document. The page's code itself never parses HTML (no innerHTML and friends), so message
 * text can only ever be text.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { UI_CSP, uiRoot } from '../../routes/ui.js'
import { buildTestApp } from '../helpers/app.js'
import { tokenFixture } from '../helpers/tokens.js'
import { problemOf } from '../helpers/problem.js'

const apps: App[] = []
afterEach(async () => { for (const app of apps.splice(0)) await app.close() })
async function app (options: Parameters<typeof buildTestApp>[0] = {}): Promise<App> {
  const built = await buildTestApp(options)
  apps.push(built)
  return built
}

const UI = uiRoot()

describe('the dashboard routes', () => {
  it('redirects / to /ui/ and /ui to /ui/', async () => {
    const a = await app()
    const root = await a.inject({ method: 'GET', url: '/' })
    expect([root.statusCode, root.headers.location]).toEqual([302, '/ui/'])
    const bare = await a.inject({ method: 'GET', url: '/ui' })
    expect([bare.statusCode, bare.headers.location]).toEqual([301, '/ui/'])
  })

  it('serves index.html at /ui/ and at every /ui/sessions/{id}, with a strict CSP and nosniff', async () => {
    const a = await app()
    const index = readFileSync(join(UI, 'index.html'), 'utf8')
    for (const url of ['/ui/', '/ui/sessions/demo', '/ui/sessions/0195f3a2-7c1e-7d3a-9b2c-4e5f6a7b8c9d?leaf=abc']) {
      const res = await a.inject({ method: 'GET', url })
      expect([url, res.statusCode, res.headers['content-type']]).toEqual([url, 200, 'text/html; charset=utf-8'])
      expect(res.body).toBe(index)
      expect(res.headers['content-security-policy']).toBe(UI_CSP)
      expect(res.headers['x-content-type-options']).toBe('nosniff')
    }
    expect(UI_CSP).toContain("script-src 'self'")
    expect(UI_CSP).toContain("default-src 'none'")
    expect(UI_CSP).not.toContain('unsafe')
  })

  it('serves the page code as JavaScript and CSS from ui/, nothing outside it', async () => {
    const a = await app()
    const js = await a.inject({ method: 'GET', url: '/ui/app.js' })
    // A module script needs a JavaScript MIME type (with nosniff the browser checks it).
    expect([js.statusCode, js.headers['content-type']]).toEqual([200, expect.stringMatching(/^(text|application)\/javascript; charset=utf-8$/)])
    const css = await a.inject({ method: 'GET', url: '/ui/style.css' })
    expect([css.statusCode, css.headers['content-type']]).toEqual([200, 'text/css; charset=utf-8'])
    for (const url of ['/ui/nope.js', '/ui/../package.json', '/ui/%2e%2e/package.json', '/ui/..%2fpackage.json']) {
      const res = await a.inject({ method: 'GET', url })
      expect([url, res.statusCode]).toEqual([url, expect.any(Number)])
      expect(res.statusCode).toBeGreaterThanOrEqual(400)
      expect(res.body).not.toContain('"name": "session-store"')
    }
  })

  it('keeps the CSP to the dashboard: API answers do not carry it', async () => {
    const a = await app()
    const res = await a.inject({ method: 'GET', url: '/healthz' })
    expect(res.headers['content-security-policy']).toBeUndefined()
  })

  it('answers the pages without a token when tokens are on, while the API asks for one', async () => {
    const fx = await tokenFixture()
    try {
      const a = await app({ tokens: await fx.load() })
      for (const url of ['/', '/ui/', '/ui/app.js', '/ui/sessions/demo']) {
        expect([url, (await a.inject({ method: 'GET', url })).statusCode]).toEqual([url, url === '/' ? 302 : 200])
      }
      expect(problemOf(await a.inject({ method: 'GET', url: '/v1/sessions' }))).toEqual({ status: 401, code: 'SS_UNAUTHENTICATED' })
    } finally {
      fx.cleanup()
    }
  })

  it('keeps its pages out of the OpenAPI document, which has only the redirect of GET /', async () => {
    const a = await app()
    await a.ready()
    const paths = (a.swagger() as { paths: Record<string, Record<string, unknown>> }).paths
    expect(Object.keys(paths).filter((p) => p === '/' || p.startsWith('/ui'))).toEqual(['/'])
    expect(Object.keys(paths['/']!)).toEqual(['get'])
  })
})

describe('the page code', () => {
  const files = readdirSync(UI).filter((f) => /\.(js|html)$/.test(f))

  it('never turns a string into HTML', () => {
    for (const file of files) {
      const text = readFileSync(join(UI, file), 'utf8')
      expect([file, text.match(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|DOMParser|createContextualFragment|eval\(|new Function/g)]).toEqual([file, null])
    }
  })

  it('has no inline script, style or event handler (the CSP would block them)', () => {
    const html = readFileSync(join(UI, 'index.html'), 'utf8')
    expect(html.match(/<script(?![^>]*\bsrc=)[^>]*>/g)).toBeNull()
    expect(html.match(/\sstyle=|<style|\son[a-z]+=/gi)).toBeNull()
    for (const file of files.filter((f) => f.endsWith('.js'))) {
      expect([file, readFileSync(join(UI, file), 'utf8').match(/setAttribute\('style'|['"]style['"]\s*:/g)]).toEqual([file, null])
    }
  })

  it('preloads every module from index.html, so none waits for the one importing it', () => {
    const html = readFileSync(join(UI, 'index.html'), 'utf8')
    const preloaded = [...html.matchAll(/<link rel="modulepreload" href="\/ui\/([\w-]+\.js)">/g)].map((m) => m[1]).sort()
    expect(preloaded).toEqual(files.filter((f) => f.endsWith('.js') && f !== 'app.js').sort())
  })

  it('fetches nothing from another origin', () => {
    for (const file of readdirSync(UI)) {
      expect([file, readFileSync(join(UI, file), 'utf8').match(/(?:src|href)=["']?(?:https?:)?\/\//g)]).toEqual([file, null])
    }
  })
})
