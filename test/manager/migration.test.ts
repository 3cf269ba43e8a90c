import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SessionManager } from '../../src/session/session-manager.js'
import type { FileRecord } from '../../src/session/types.js'
import { makeSessionEnv, type SessionEnv } from '../helpers/session-env.js'

let env: SessionEnv
beforeEach(() => { env = makeSessionEnv() })
afterEach(() => env.cleanup())

const HEX8 = /^[0-9a-f]{8}$/
const open = async (path: string) => await SessionManager.open(path, undefined, env.storage, env.options)
const jsonl = (...records: unknown[]) => records.map((r) => JSON.stringify(r) + '\n').join('')
const write = (name: string, text: string) => {
  const dir = join(env.dataDir, 'sessions', '--work-pi--')
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, name), text)
  return join(dir, name)
}
const v1Header = { type: 'session', id: 'v1-session', timestamp: '2025-11-20T23:33:50.805Z', cwd: '/work/pi' }
const v1 = (role: string, text: string) => ({ type: 'message', timestamp: '2025-11-20T23:33:51.000Z', message: { role, content: text } })
const countKey = (value: unknown, key: string): number => {
  let n = 0
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const v = stack.pop()
    if (typeof v !== 'object' || v === null) continue
    if (!Array.isArray(v) && Object.hasOwn(v, key)) n++
    stack.push(...Object.values(v))
  }
  return n
}

describe('migrations on open (SPEC.md §4)', () => {
  it('§12.20 a v1 file opens with 8-hex ids in one chain and version 3 on disk', async () => {
    const path = write('v1.jsonl', jsonl(v1Header, v1('user', 'a'), v1('assistant', 'b'), v1('user', 'c')))
    const m = await open(path)
    const entries = m.getEntries()
    expect(entries).toHaveLength(3)
    entries.forEach((e, i) => {
      expect(e.id).toMatch(HEX8)
      expect(e.parentId).toBe(i === 0 ? null : entries[i - 1]!.id)
    })
    const disk = env.readJsonl(path)
    expect(disk[0]!.version).toBe(3)
    expect(disk.slice(1).map((r) => r.id)).toEqual(entries.map((e) => e.id))
  })

  it('§12.21 a v1 compaction with firstKeptEntryIndex 2 gets the id of the second record; the key is gone', async () => {
    const compaction = { type: 'compaction', timestamp: '2025-11-20T23:34:00.000Z', summary: 's', tokensBefore: 5, firstKeptEntryIndex: 2 }
    const path = write('v1c.jsonl', jsonl(v1Header, v1('user', 'a'), v1('assistant', 'b'), compaction))
    const m = await open(path)
    const [, second, c] = m.getEntries()
    expect(c!.firstKeptEntryId).toBe(second!.id)
    expect(Object.hasOwn(c!, 'firstKeptEntryIndex')).toBe(false)
    expect(Object.hasOwn(env.readJsonl(path)[3]!, 'firstKeptEntryIndex')).toBe(false)
  })

  it('§12.22 invalid firstKeptEntryIndex values leave no firstKeptEntryId and delete the key', async () => {
    for (const [i, value] of [0, -1, 1.5, '2', 99, 4].entries()) {
      const compaction = { type: 'compaction', timestamp: '2025-11-20T23:34:00.000Z', summary: 's', tokensBefore: 5, firstKeptEntryIndex: value }
      const path = write(`bad-${i}.jsonl`, jsonl(v1Header, v1('user', 'a'), compaction, v1('user', 'after'), v1('user', 'after2')))
      const c = (await open(path)).getEntries()[1]!
      expect(c.type).toBe('compaction')
      expect(Object.hasOwn(c, 'firstKeptEntryId')).toBe(false)
      expect(Object.hasOwn(c, 'firstKeptEntryIndex')).toBe(false)
    }
  })

  it('§12.23 firstKeptEntryIndex equal to the compaction index stores its own id; context is summary + later entries', async () => {
    const compaction = { type: 'compaction', timestamp: '2025-11-20T23:34:00.000Z', summary: 'sum', tokensBefore: 5, firstKeptEntryIndex: 3 }
    const path = write('own.jsonl', jsonl(v1Header, v1('user', 'a'), v1('assistant', 'b'), compaction, v1('user', 'later')))
    const m = await open(path)
    const c = m.getEntries()[2]!
    expect(c.firstKeptEntryId).toBe(c.id)
    const messages = m.buildSessionContext().messages
    expect(messages.map((x) => x.role)).toEqual(['compactionSummary', 'user'])
    expect(messages[1]!.content).toBe('later')
  })

  it('§12.24 a v2 file keeps its ids, turns hookMessage into custom and is rewritten as v3', async () => {
    const hook = { type: 'message', id: 'def67890', parentId: 'abc12345', timestamp: '2025-11-20T23:34:00.000Z', message: { role: 'hookMessage', content: 'h', extra: 1 } }
    const path = write('v2.jsonl', jsonl({ ...v1Header, version: 2 }, { ...v1('user', 'a'), id: 'abc12345', parentId: null }, hook))
    const m = await open(path)
    expect(m.getEntries().map((e) => e.id)).toEqual(['abc12345', 'def67890'])
    expect(m.getEntry('def67890')!.message).toEqual({ role: 'custom', content: 'h', extra: 1 })
    const disk = env.readJsonl(path)
    expect(disk[0]!.version).toBe(3)
    expect((disk[2]!.message as FileRecord).role).toBe('custom')
  })

  it('§12.25 legacy header keys survive the migration rewrite', async () => {
    const legacy = { ...v1Header, provider: 'anthropic', modelId: 'claude', thinkingLevel: 'off', branchedFrom: '/x/y.jsonl' }
    const path = write('legacy.jsonl', jsonl(legacy, v1('user', 'a')))
    await open(path)
    expect(env.readJsonl(path)[0]).toEqual({ ...legacy, version: 3 })
  })

  it('§12.28 a migration whose rewrite fails makes open fail and leaves the file byte-identical', async () => {
    const path = write('ro.jsonl', jsonl(v1Header, v1('user', 'a')))
    const before = readFileSync(path)
    const dir = join(env.dataDir, 'sessions', '--work-pi--')
    chmodSync(dir, 0o555)
    try {
      const failing = makeFailingRename(env)
      await expect(SessionManager.open(path, undefined, failing, env.options)).rejects.toMatchObject({ code: 'EACCES', message: 'EACCES: permission denied' })
    } finally {
      chmodSync(dir, 0o755)
    }
    expect(readFileSync(path)).toEqual(before)
  })
})

/** Root ignores permission bits, so the read-only directory is also enforced at the storage seam. */
function makeFailingRename (e: SessionEnv): typeof e.storage {
  const inner = e.storage
  return new Proxy(inner, {
    get (target, prop, receiver) {
      if (prop === 'openWriter' || prop === 'rename') {
        return () => { throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' }) }
      }
      const v = Reflect.get(target, prop, receiver) as unknown
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
    },
  })
}

describe('agent fixtures (SPEC.md §12.26, §12.27)', () => {
  it('§12.26 pi-v1-large-session: 1,019 lines, v3, no partialJson on disk (3 in memory), 914 context messages', async () => {
    const path = env.fixture('pi-v1-large-session.jsonl')
    const m = await open(path)
    const text = readFileSync(path, 'utf8')
    expect(text.split('\n').filter((l) => l !== '')).toHaveLength(1019)
    expect(env.readJsonl(path)[0]!.version).toBe(3)
    expect(text.includes('"partialJson"')).toBe(false)
    expect(countKey(m.getEntries(), 'partialJson')).toBe(3)
    const ctx = m.buildSessionContext()
    expect(ctx.messages).toHaveLength(914)
    expect(ctx.thinkingLevel).toBe('off')
    expect(ctx.models.default).toBe('anthropic/claude-sonnet-4-5')
  })

  it('§12.27 pi-v1-before-compaction: firstKeptEntryIds are records 293 and 551; 446 context messages', async () => {
    const path = env.fixture('pi-v1-before-compaction.jsonl')
    const m = await open(path)
    const records = env.readJsonl(path)
    const compactions = records.filter((r) => r.type === 'compaction')
    expect(compactions.map((c) => c.firstKeptEntryId)).toEqual([records[293]!.id, records[551]!.id])
    for (const i of [293, 551]) expect((records[i]!.message as FileRecord).role).toBe('user')
    const ctx = m.buildSessionContext()
    expect(ctx.messages).toHaveLength(446)
    expect(ctx.messages[0]!.role).toBe('compactionSummary')
    expect(ctx.models.default).toBe('anthropic/claude-opus-4-5')
  })

  it('a migrated fixture reloads to the same entries and round-trips byte-for-byte through a rewrite', async () => {
    for (const name of ['pi-v1-large-session.jsonl', 'pi-v1-before-compaction.jsonl']) {
      const path = env.fixture(name)
      const first = await open(path)
      const migrated = readFileSync(path)
      const mtime = statSync(path).mtimeMs
      const again = await open(path)
      // In memory the first load keeps transient keys that the file never holds (§9.1).
      const stored = JSON.parse(JSON.stringify(first.getEntries(), (k, v: unknown) => k === 'partialJson' || k === 'jsonlEvents' ? undefined : v))
      expect(again.getEntries()).toEqual(stored)
      expect(statSync(path).mtimeMs).toBe(mtime)
      await again.rewriteEntries()
      expect(readFileSync(path).equals(migrated)).toBe(true)
    }
  })
})
