/**
 * The start-up scan: header id → file, read from a prefix of each file, synchronously in
 * batches where the storage can, and through `readTextPrefix` where it cannot. Both ways must
 * index the same files.
 */
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { silentLogger } from '../../src/session/logger.js'
import { scanSessions } from '../../src/registry/session-index.js'
import { MemorySessionStorage } from '../../src/storage/index.js'
import type { SessionStorage } from '../../src/storage/types.js'

const DATA = '/scan-data'
const header = (id: string, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ type: 'session', version: 3, id, timestamp: '2026-03-14T15:00:00.000Z', cwd: '/w', ...extra }) + '\n'

/** 300 files over 3 directories (more than one batch), plus the odd ones. */
function populate (storage: SessionStorage): Map<string, string> {
  const expected = new Map<string, string>()
  for (let i = 0; i < 300; i++) {
    const path = join(DATA, 'sessions', `--w${i % 3}--`, `2026-03-14T15-00-00-000Z_s${i}.jsonl`)
    storage.writeTextSync(path, header(`s${i}`) + '{"type":"message","id":"a","parentId":null}\n')
    expected.set(`s${i}`, path)
  }
  const long = join(DATA, 'sessions', '--w0--', 'long.jsonl') // line 1 longer than the prefix read
  storage.writeTextSync(long, header('long', { title: 't'.repeat(10_000) }))
  expected.set('long', long)
  const named = join(DATA, 'sessions', '--w1--', '2026-03-14T15-00-00-000Z_other.jsonl') // the header id wins over the name
  storage.writeTextSync(named, header('by-header'))
  expected.set('by-header', named)
  storage.writeTextSync(join(DATA, 'sessions', '--w2--', 'garbage.jsonl'), 'not json\n')
  storage.writeTextSync(join(DATA, 'sessions', '.hidden', 'x.jsonl'), header('hidden'))
  return expected
}

/** `storage` without `readTextPrefixSync`, as a storage that lacks it is. */
function withoutSyncPrefix (storage: SessionStorage): SessionStorage {
  return new Proxy(storage, {
    get (target, prop) {
      if (prop === 'readTextPrefixSync') return undefined
      const value = Reflect.get(target, prop, target) as unknown
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

describe('scanSessions', () => {
  it('indexes every session by its header id, with or without readTextPrefixSync', async () => {
    const storage = new MemorySessionStorage()
    const expected = populate(storage)
    let syncReads = 0
    const counting = new Proxy(storage, {
      get (target, prop) {
        const value = Reflect.get(target, prop, target) as unknown
        if (prop === 'readTextPrefixSync') return (path: string, max: number) => { syncReads++; return storage.readTextPrefixSync(path, max) }
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
    const fast = await scanSessions(counting, DATA, silentLogger)
    const slow = await scanSessions(withoutSyncPrefix(storage), DATA, silentLogger)
    expect(syncReads).toBe(303)
    expect(new Map(fast.entries())).toEqual(expected)
    expect(new Map(slow.entries())).toEqual(expected)
  })
})
