/**
 * `HttpSessionStorageBackend` (`session-store/omp`) against a real server: paths as sessions,
 * `expectedSize` compare-and-swap as `If-Match` / `If-None-Match: *` (a refused one is a
 * `SessionWriteConflictError`), idempotent appends, the index, slices, titles, removal, and an
 * entry point that loads nothing but Node built-ins.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { HttpSessionStorageBackend, SessionWriteConflictError } from '../../src/omp/index.js'
import { buildTestApp } from '../helpers/app.js'

let app: App
let url: string
let root: string
beforeEach(async () => {
  app = await buildTestApp()
  url = await app.listen({ port: 0, host: '127.0.0.1' })
  root = mkdtempSync(join(tmpdir(), 'ss-omp-'))
})
afterEach(async () => {
  await app.close()
  rmSync(root, { recursive: true, force: true })
})

const backend = (): HttpSessionStorageBackend => new HttpSessionStorageBackend({ server: url, sessionsDir: join(root, 'sessions'), blobsDir: join(root, 'blobs') })
const TS = '2026-03-14T15:04:07.123Z'
const header = JSON.stringify({ type: 'session', version: 3, id: 'omp-s1', timestamp: TS, cwd: '/work/omp-unit' }) + '\n'
const entry = (id: string, parentId: string | null, role = 'user'): string =>
  JSON.stringify({ type: 'message', id, parentId, timestamp: TS, message: { role, content: `${role} ${id}`, timestamp: 1 } }) + '\n'
const PATH = (): string => join(root, 'sessions', '--work-omp-unit--', '2026-03-14T15-04-07-123Z_omp-s1.jsonl')
const exported = async (): Promise<string> => (await app.inject({ method: 'GET', url: '/v1/sessions/omp-s1/export' })).body

describe('HttpSessionStorageBackend', () => {
  it('creates a file that must not exist, and refuses to create it again', async () => {
    const b = backend()
    await b.init()
    await b.writeFull(PATH(), header + entry('a1', null), 1, undefined, null)
    expect(await exported()).toBe(header + entry('a1', null))
    await expect(b.writeFull(PATH(), header, 2, undefined, null)).rejects.toBeInstanceOf(SessionWriteConflictError)
  })

  it('replaces a file at the expected size (If-Match), and refuses a stale size after another writer appended', async () => {
    const a = backend()
    const text = header + entry('a1', null)
    await a.writeFull(PATH(), text, 1, undefined, null)
    await a.writeFull(PATH(), text + entry('b2', 'a1', 'assistant'), 2, undefined, Buffer.byteLength(text))
    const size = Buffer.byteLength(text + entry('b2', 'a1', 'assistant'))
    const b = backend()
    expect((await b.loadIndex()).map((e) => [relative(root, e.path), e.size])).toEqual([[relative(root, PATH()), size]])
    await b.append(PATH(), entry('c3', 'b2'), 3)
    const err = await a.writeFull(PATH(), text, 4, undefined, size).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(SessionWriteConflictError)
    expect(err).toMatchObject({ name: 'SessionWriteConflictError', expectedSize: size })
    expect(await exported()).toBe(text + entry('b2', 'a1', 'assistant') + entry('c3', 'b2'))
  })

  it('appends lines idempotently, and reads the file whole and in slices', async () => {
    const b = backend()
    await b.writeFull(PATH(), header, 1, undefined, null)
    await b.append(PATH(), entry('a1', null), 2)
    await b.append(PATH(), entry('a1', null), 3)
    const text = header + entry('a1', null)
    expect(await exported()).toBe(text)
    expect(await b.readFull(PATH())).toBe(text)
    expect(await b.readSlices(PATH(), 10, 5)).toEqual([text.slice(0, 10), text.slice(-5)])
    expect(await b.readFull(join(dirname(PATH()), '2026-03-14T15-04-07-123Z_nope.jsonl'))).toBeNull()
  })

  it("rewrites oh-my-pi's fixed-width title line in place, and removes sessions", async () => {
    const b = backend()
    const slot = (title: string): string => {
      const line = (pad: string): string => JSON.stringify({ type: 'title', v: 1, title, updatedAt: TS, pad })
      return line(' '.repeat(255 - Buffer.byteLength(line('')))) + '\n'
    }
    await b.writeFull(PATH(), slot('') + header, 1, undefined, null)
    await b.updateSessionTitle(PATH(), { title: 'Renamed', updatedAt: TS }, 2)
    expect(await exported()).toBe(slot('Renamed') + header)
    const session = (await app.inject({ method: 'GET', url: '/v1/sessions/omp-s1' })).json()
    expect(session.header.title).toBe('Renamed')
    await b.move(PATH(), PATH().replace('--work-omp-unit--', '-moved'), 3)
    await b.remove([PATH().replace('--work-omp-unit--', '-moved')])
    expect((await app.inject({ method: 'GET', url: '/v1/sessions/omp-s1' })).statusCode).toBe(404)
  })
})

describe('session-store/omp', () => {
  it('loads nothing but its own modules and Node built-ins, and is the package export ./omp', () => {
    const ROOT = resolve(import.meta.dirname, '..', '..')
    const seen = new Set<string>()
    const packages = new Set<string>()
    const visit = (file: string): void => {
      if (seen.has(file)) return
      seen.add(file)
      for (const m of readFileSync(file, 'utf8').matchAll(/^(?:import|export)\s+(?!type\b)[^;'"]*?from\s+'([^']+)'/gm)) {
        const spec = m[1]!
        if (spec.startsWith('.')) visit(resolve(dirname(file), spec.replace(/\.js$/, '.ts')))
        else packages.add(spec)
      }
    }
    visit(join(ROOT, 'src', 'omp', 'index.ts'))
    expect([...seen].map((f) => relative(ROOT, f)).every((f) => f.startsWith('src/omp/'))).toBe(true)
    expect([...packages].filter((p) => !p.startsWith('node:'))).toEqual([])
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> }
    expect(pkg.exports['./omp']).toEqual({ types: './dist/src/omp/index.d.ts', default: './dist/src/omp/index.js' })
  })
})
