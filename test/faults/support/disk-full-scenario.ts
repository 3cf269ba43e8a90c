/**
 * The disk-full fault, against a real listening app over `FileSessionStorage` on a `Volume`
 * (tiny tmpfs or simulated full disk). The affected session answers 507 `SS_STORAGE_FAILED`
 * (problem+json) and stays latched (SPEC.md §8.7, no automatic retry); other sessions keep
 * reading, and writing once there is room (or at once when only one file's disk is full); no
 * file is left with a partial line or a stray temp file, before or after a restart; after the
 * restart everything acknowledged is there, nothing that failed is, and every session writes.
 */
import { storeStack } from '../../helpers/stack.js'
import { readdirSync } from 'node:fs'
import { basename, join } from 'node:path'
import { buildApp, type App } from '../../../src/app.js'
import { FileBlobStore } from '../../../src/blobs/index.js'
import { loadConfig } from '../../../src/config.js'
import { type SessionRegistry } from '../../../src/registry/session-registry.js'
import { FileSessionStorage } from '../../../src/storage/index.js'
import { allEntries, assistantMessage, call, userMessage, type JsonAnswer } from './http.js'
import { inspectSessionFile, sessionFiles } from './session-files.js'
import type { Volume } from './volumes.js'

export interface DiskFullResult {
  problems: string[]
  /** 507 answers seen, and short writes / ENOSPC refusals seen on the volume. */
  failures: number
  shortWrites: number
  refusals: number
}

interface Running { app: App, registry: SessionRegistry, close: () => Promise<void>, base: string, errors: Array<Record<string, unknown>> }

async function start (dataDir: string): Promise<Running> {
  const errors: Array<Record<string, unknown>> = []
  const noop = (): void => {}
  const logger = { info: noop, warn: noop, error: (obj: object, msg: string) => { errors.push({ ...obj, msg }) } }
  const blobs = new FileBlobStore(join(dataDir, 'blobs'))
  const stack = storeStack({ dataDir, storage: new FileSessionStorage(), blobs, logger })
  const registry = stack.registry
  const config = loadConfig({ STORAGE: 'disk', DATA_DIR: dataDir })
  const app = await buildApp({ config, store: stack.store, blobs, registry, logger: false })
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  return { app, registry, close: stack.close, base, errors }
}

async function stop (r: Running): Promise<void> {
  await r.app.close()
  await r.close().catch(() => {})
}

/** A big entry: larger than what `fill()` leaves, so that its write is short, then refused. */
const big = (tag: string): Record<string, unknown> => userMessage(`${tag} ${'x'.repeat(16 * 1024)}`)

class Check {
  readonly problems: string[] = []
  /** Acknowledged (`persisted: true`) entry ids per session; and the texts of failed appends. */
  readonly acked = new Map<string, string[]>()
  readonly failedTags = new Set<string>()
  failures = 0

  expectAck (session: string, res: JsonAnswer, what: string): void {
    if (res.status !== 201 || res.json?.persisted !== true) {
      this.problems.push(`${what}: expected 201 persisted, got ${res.status} ${JSON.stringify(res.json)}`)
      return
    }
    this.acked.set(session, [...(this.acked.get(session) ?? []), ...res.json.entries.map((e: { id: string }) => e.id)])
  }

  expect507 (res: JsonAnswer, what: string, tag?: string): void {
    this.failures += res.status === 507 ? 1 : 0
    if (tag !== undefined) this.failedTags.add(tag)
    const type = String(res.headers['content-type'])
    if (res.status !== 507 || res.json?.code !== 'SS_STORAGE_FAILED' || !type.startsWith('application/problem+json')) {
      this.problems.push(`${what}: expected 507 SS_STORAGE_FAILED problem+json, got ${res.status} ${type} ${JSON.stringify(res.json)}`)
    }
  }

  async expectReads (base: string, sessions: readonly string[], what: string): Promise<void> {
    for (const id of sessions) {
      for (const route of ['', '/entries', '/context', '/tree']) {
        const res = await call(base, 'GET', `/v1/sessions/${id}${route}`)
        if (res.status !== 200) this.problems.push(`${what}: GET ${route || 'session'} of ${id} answered ${res.status}`)
      }
    }
  }

  /** Every session file ends in "\n" and every line parses; no temp file is left over. */
  expectWholeFiles (dataDir: string, what: string): void {
    for (const path of sessionFiles(dataDir)) this.problems.push(...inspectSessionFile(path).problems.map((p) => `${what}: ${p}`))
    for (const dir of readdirSync(join(dataDir, 'sessions'))) {
      for (const name of readdirSync(join(dataDir, 'sessions', dir))) {
        if (name.endsWith('.tmp')) this.problems.push(`${what}: temp file ${dir}/${name} left behind`)
      }
    }
  }

  /** After a restart: every acknowledged entry is served, no failed append's text is. */
  async expectDurableState (base: string, what: string): Promise<void> {
    for (const [id, acked] of this.acked) {
      const entries = await allEntries(base, id).catch(() => undefined)
      if (entries === undefined) { this.problems.push(`${what}: entries of ${id} unreadable`); continue }
      const ids = new Set(entries.map((e) => e.id))
      for (const a of acked) if (!ids.has(a)) this.problems.push(`${what}: acknowledged entry ${a} of ${id} lost`)
      const text = JSON.stringify(entries)
      for (const tag of this.failedTags) if (text.includes(tag)) this.problems.push(`${what}: failed append ${tag} of ${id} is on disk`)
    }
  }
}

async function flushedSession (base: string, c: Check, cwd: string): Promise<string> {
  const created = await call(base, 'POST', '/v1/sessions', { cwd })
  const id = created.json.header.id as string
  c.expectAck(id, await call(base, 'POST', `/v1/sessions/${id}/entries`, assistantMessage('hi')), `first flush of ${cwd}`)
  c.expectAck(id, await call(base, 'POST', `/v1/sessions/${id}/entries`, { entries: [userMessage('a'), assistantMessage('b')] }), `append to ${cwd}`)
  return id
}

const append = async (base: string, id: string, body: unknown): Promise<JsonAnswer> =>
  await call(base, 'POST', `/v1/sessions/${id}/entries`, body)

/**
 * The whole disk fills. A (big append), C (rename: an atomic rewrite) and a new session D
 * (first flush) fail with 507; B keeps reading, and writes once there is room again.
 */
export async function runSharedDiskFull (volume: Volume): Promise<DiskFullResult> {
  const c = new Check()
  let r = await start(volume.dataDir)
  const a = await flushedSession(r.base, c, '/full/a')
  const b = await flushedSession(r.base, c, '/full/b')
  const cc = await flushedSession(r.base, c, '/full/c')

  volume.fill()
  c.expect507(await append(r.base, a, big('fail-a-1')), 'big append to A on a full disk', 'fail-a-1')
  c.expect507(await append(r.base, a, big('fail-a-2')), 'A again, reloaded from disk, still no room', 'fail-a-2')
  c.expect507(await call(r.base, 'PATCH', `/v1/sessions/${cc}`, { title: 'fail-c-title' }), 'rename of C (atomic rewrite)', 'fail-c-title')
  const d = (await call(r.base, 'POST', '/v1/sessions', { cwd: '/full/d' })).json.header.id as string
  c.expect507(await append(r.base, d, { entries: [assistantMessage('fail-d'), big('fail-d')] }), 'first flush of new session D', 'fail-d')
  await c.expectReads(r.base, [a, b, cc, d], 'reads on a full disk')
  c.expectWholeFiles(volume.dataDir, 'on a full disk')

  volume.release()
  c.expectAck(b, await append(r.base, b, big('b-after-room')), 'B once there is room')
  // SPEC.md §8.7: a latched manager never retries; the registry reloads the session from disk
  // after each failure (setSessionFile semantics), so A writes again once there is room.
  c.expectAck(a, await append(r.base, a, userMessage('a-after-room')), 'A once there is room (reloaded)')
  const persistenceErrors = r.errors.filter((e) => e.msg === 'Session persistence error.' && e.sessionId === a)
  if (persistenceErrors.length !== 2) c.problems.push(`A's persistence error was logged ${persistenceErrors.length} times, not once per failed write (2)`)
  c.expectWholeFiles(volume.dataDir, 'after room came back')

  await stop(r)
  c.expectWholeFiles(volume.dataDir, 'after stop')
  r = await start(volume.dataDir)
  await c.expectDurableState(r.base, 'after restart')
  const title = (await call(r.base, 'GET', `/v1/sessions/${cc}`)).json?.header?.title
  if (title !== undefined) c.problems.push(`after restart: C's failed rename left title ${JSON.stringify(title)}`)
  const dAfter = await call(r.base, 'GET', `/v1/sessions/${d}`)
  if (dAfter.status !== 404) c.problems.push(`after restart: D, never durable, answered ${dAfter.status} instead of 404`)
  for (const id of [a, b, cc]) c.expectAck(id, await append(r.base, id, big('after-restart')), `append to ${id} after restart`)
  await stop(r)
  c.expectWholeFiles(volume.dataDir, 'after the final stop')
  return { problems: c.problems, failures: c.failures, shortWrites: volume.disk.shortWrites, refusals: volume.disk.refusals }
}

/**
 * Only A's file sits on the full disk (`affects` picks it through `victim`): while A answers
 * 507, B and C keep reading and writing at the same time.
 */
export async function runOneFileFull (volume: Volume, victim: { path?: string }): Promise<DiskFullResult> {
  const c = new Check()
  let r = await start(volume.dataDir)
  const a = await flushedSession(r.base, c, '/one/a')
  const b = await flushedSession(r.base, c, '/one/b')
  const cc = await flushedSession(r.base, c, '/one/c')
  victim.path = sessionFiles(volume.dataDir).find((p) => basename(p).endsWith(`_${a}.jsonl`))

  volume.fill()
  const others = async (id: string): Promise<void> => {
    for (let i = 0; i < 5; i++) {
      const [w, rd] = await Promise.all([append(r.base, id, big(`ok-${i}`)), call(r.base, 'GET', `/v1/sessions/${id}/context`)])
      c.expectAck(id, w, `append ${i} to ${id} while A's disk is full`)
      if (rd.status !== 200) c.problems.push(`context of ${id} answered ${rd.status} while A's disk is full`)
    }
  }
  const [failed] = await Promise.all([append(r.base, a, big('fail-one-a')), others(b), others(cc)])
  c.expect507(failed, 'big append to A', 'fail-one-a')
  await c.expectReads(r.base, [a, b, cc], 'reads while A is failed')
  c.expectWholeFiles(volume.dataDir, 'while A is failed')

  volume.release()
  await stop(r)
  r = await start(volume.dataDir)
  await c.expectDurableState(r.base, 'after restart')
  for (const id of [a, b, cc]) c.expectAck(id, await append(r.base, id, userMessage('after restart')), `append to ${id} after restart`)
  await stop(r)
  c.expectWholeFiles(volume.dataDir, 'after the final stop')
  return { problems: c.problems, failures: c.failures, shortWrites: volume.disk.shortWrites, refusals: volume.disk.refusals }
}
