/**
 * The one contract every `SessionStorage` adapter must pass (SPEC.md §10.1, §10.2). Adapter
 * files call `storageContract` and add their adapter-only cases after it.
 */
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { SessionStorage } from '../../src/storage/types.js'

export interface StorageFixture {
  storage: SessionStorage
  /** An existing, empty directory for this test. */
  root: string
  cleanup(): Promise<void>
}

function syncCode (fn: () => unknown): unknown {
  try {
    fn()
  } catch (err) {
    return (err as { code?: unknown }).code
  }
  return 'no error'
}

export function storageContract (name: string, makeStorage: () => Promise<StorageFixture>): void {
  describe(`${name} storage contract`, () => {
    let fx: StorageFixture
    let s: SessionStorage
    let root: string
    beforeEach(async () => {
      fx = await makeStorage()
      s = fx.storage
      root = fx.root
    })
    afterEach(async () => { await fx.cleanup() })

    describe('files', () => {
      it('writeTextSync creates parent directories and readText returns the content', async () => {
        const p = join(root, 'a', 'b', 'f.txt')
        s.writeTextSync(p, 'hello\nwörld\n')
        expect(await s.readText(p)).toBe('hello\nwörld\n')
        expect(s.existsSync(join(root, 'a', 'b'))).toBe(true)
      })

      it('writeText replaces the whole content', async () => {
        const p = join(root, 'x', 'f.txt')
        await s.writeText(p, 'first version, long\n')
        await s.writeText(p, 'second\n')
        expect(await s.readText(p)).toBe('second\n')
      })

      it('existsSync and exists tell files, directories and missing paths apart', async () => {
        const p = join(root, 'd', 'f.txt')
        expect(s.existsSync(p)).toBe(false)
        expect(await s.exists(p)).toBe(false)
        s.writeTextSync(p, 'x')
        expect(s.existsSync(p)).toBe(true)
        expect(await s.exists(p)).toBe(true)
        expect(await s.exists(join(root, 'd'))).toBe(true)
        expect(await s.exists(join(root, 'nope'))).toBe(false)
      })

      it('statSync reports the size in UTF-8 bytes and a matching mtime', () => {
        const p = join(root, 'f.txt')
        s.writeTextSync(p, 'é\n€😀')
        const st = s.statSync(p)
        expect(st.size).toBe(3 + 3 + 4)
        expect(st.mtime).toBeInstanceOf(Date)
        expect(Math.abs(st.mtime.getTime() - st.mtimeMs)).toBeLessThan(1)
        expect(Math.abs(st.mtimeMs - Date.now())).toBeLessThan(60_000)
      })

      it('missing paths fail with code ENOENT everywhere', async () => {
        const p = join(root, 'missing.jsonl')
        expect(syncCode(() => s.statSync(p))).toBe('ENOENT')
        await expect(s.readText(p)).rejects.toMatchObject({ code: 'ENOENT' })
        await expect(s.readTextPrefix(p, 10)).rejects.toMatchObject({ code: 'ENOENT' })
        await expect(s.unlink(p)).rejects.toMatchObject({ code: 'ENOENT' })
        await expect(s.rename(p, join(root, 'other'))).rejects.toMatchObject({ code: 'ENOENT' })
        expect(s.existsSync(join(root, 'other'))).toBe(false)
      })

      it('unlink deletes a file', async () => {
        const p = join(root, 'f.txt')
        s.writeTextSync(p, 'x')
        await s.unlink(p)
        expect(s.existsSync(p)).toBe(false)
        expect(s.listFilesSync(root, '*')).toEqual([])
      })

      it('rename replaces the destination and removes the source', async () => {
        const from = join(root, 'new.tmp')
        const to = join(root, 'target.jsonl')
        s.writeTextSync(to, 'old\n')
        s.writeTextSync(from, 'new\n')
        await s.rename(from, to)
        expect(await s.readText(to)).toBe('new\n')
        expect(s.existsSync(from)).toBe(false)
        expect(s.listFilesSync(root, '*')).toEqual([to])
      })

      it('a file cannot be written where a directory is', async () => {
        const d = join(root, 'dir.jsonl')
        s.ensureDirSync(d)
        expect(syncCode(() => s.writeTextSync(d, 'x'))).toBe('EISDIR')
        await expect(s.readText(d)).rejects.toMatchObject({ code: 'EISDIR' })
      })
    })

    describe('§12.83 readTextPrefix', () => {
      it('§12.83 readTextPrefix(path, 4096) returns only the first 4,096 bytes decoded; a cut character becomes U+FFFD', async () => {
        const p = join(root, 's.jsonl')
        // 4095 ASCII bytes, then "é" (2 bytes) straddles the 4096-byte boundary.
        s.writeTextSync(p, 'a'.repeat(4095) + 'é' + 'b'.repeat(2000) + '\n')
        const prefix = await s.readTextPrefix(p, 4096)
        expect(prefix).toBe('a'.repeat(4095) + '\uFFFD')
        expect(prefix.includes('b')).toBe(false)
      })

      it('returns the whole file when it is shorter, and "" for 0 bytes', async () => {
        const p = join(root, 's.jsonl')
        s.writeTextSync(p, '{"type":"session"}\nné\n')
        expect(await s.readTextPrefix(p, 4096)).toBe('{"type":"session"}\nné\n')
        expect(await s.readTextPrefix(p, 0)).toBe('')
        expect(await s.readTextPrefix(p, 20)).toBe('{"type":"session"}\nn')
        expect(await s.readTextPrefix(p, 21)).toBe('{"type":"session"}\nn\uFFFD')
      })

      it('keeps a leading BOM, as readText does', async () => {
        const p = join(root, 'bom.jsonl')
        s.writeTextSync(p, '\uFEFF{"a":1}\n')
        expect(await s.readTextPrefix(p, 100)).toBe(await s.readText(p))
        expect((await s.readTextPrefix(p, 100)).charCodeAt(0)).toBe(0xFEFF)
      })

      it('readTextPrefixSync, where the storage has it, gives what readTextPrefix gives (ENOENT alike)', async () => {
        const sync = s.readTextPrefixSync?.bind(s)
        if (sync === undefined) return expect(typeof s.readTextPrefix).toBe('function') // optional: callers fall back
        const short = join(root, 'short.jsonl')
        const long = join(root, 'long.jsonl')
        s.writeTextSync(short, '\uFEFF{"type":"session"}\nné\n')
        s.writeTextSync(long, 'a'.repeat(40_000) + 'é'.repeat(10_000) + '\n')
        for (const p of [short, long]) {
          for (const max of [0, 1, 20, 21, 4096, 16_384, 40_001, 100_000]) expect(sync(p, max)).toBe(await s.readTextPrefix(p, max))
        }
        expect(syncCode(() => sync(join(root, 'missing.jsonl'), 10))).toBe('ENOENT')
        expect(() => sync(short, -1)).toThrow()
      })
    })

    describe('directories and listing', () => {
      it('ensureDirSync creates nested directories and is idempotent', () => {
        const d = join(root, 'a', 'b', 'c')
        s.ensureDirSync(d)
        s.ensureDirSync(d)
        expect(s.existsSync(d)).toBe(true)
        expect(s.existsSync(join(root, 'a'))).toBe(true)
        expect(s.listFilesSync(d, '*')).toEqual([])
      })

      it('listDirsSync returns the direct child directories only, sorted; [] when missing', () => {
        s.writeTextSync(join(root, 'b', 'deep', 'x.jsonl'), '1')
        s.ensureDirSync(join(root, 'a'))
        s.writeTextSync(join(root, 'file.jsonl'), '2')
        expect(s.listDirsSync(root)).toEqual([join(root, 'a'), join(root, 'b')])
        expect(s.listDirsSync(join(root, 'b'))).toEqual([join(root, 'b', 'deep')])
        expect(s.listDirsSync(join(root, 'missing'))).toEqual([])
      })

      it('listFilesSync returns full paths of direct children matching *, *.ext or an exact name', () => {
        s.writeTextSync(join(root, 'b.jsonl'), '1')
        s.writeTextSync(join(root, 'a.jsonl'), '2')
        s.writeTextSync(join(root, 'c.txt'), '3')
        s.writeTextSync(join(root, '.a.jsonl.0123456789abcdef.tmp'), '4')
        s.writeTextSync(join(root, 'sub', 'nested.jsonl'), '5')
        s.ensureDirSync(join(root, 'dir.jsonl'))
        expect(s.listFilesSync(root, '*.jsonl')).toEqual([join(root, 'a.jsonl'), join(root, 'b.jsonl')])
        expect(s.listFilesSync(root, 'c.txt')).toEqual([join(root, 'c.txt')])
        expect(s.listFilesSync(root, 'nested.jsonl')).toEqual([])
        expect(s.listFilesSync(root, '*')).toEqual([
          join(root, '.a.jsonl.0123456789abcdef.tmp'), join(root, 'a.jsonl'), join(root, 'b.jsonl'),
          join(root, 'c.txt'),
        ])
        expect(s.listFilesSync(join(root, 'sub'), '*')).toEqual([join(root, 'sub', 'nested.jsonl')])
      })

      it('listFilesSync returns [] for a missing directory', () => {
        expect(s.listFilesSync(join(root, 'missing'), '*.jsonl')).toEqual([])
      })

      it('listFilesSync rejects unsupported patterns', () => {
        expect(syncCode(() => s.listFilesSync(root, 'a*b'))).toBe('SS_INVALID_ARGUMENT')
      })

      it('syncDir resolves for an existing directory', async () => {
        s.ensureDirSync(join(root, 'd'))
        await expect(s.syncDir(join(root, 'd'))).resolves.toBeUndefined()
      })
    })

    describe('writer', () => {
      it('"a" creates the file on first write (not on open), creating parents, and appends', async () => {
        const p = join(root, 'sessions', '--x--', 's.jsonl')
        const w = s.openWriter(p, { flags: 'a' })
        expect(s.existsSync(p)).toBe(false)
        await w.writeLine('{"n":1}\n')
        await w.writeLine('{"n":2}\n{"n":3}\n')
        await w.fsync()
        await w.close()
        expect(await s.readText(p)).toBe('{"n":1}\n{"n":2}\n{"n":3}\n')
        const again = s.openWriter(p, { flags: 'a' })
        await again.writeLine('{"n":4}\n')
        await again.close()
        expect(await s.readText(p)).toBe('{"n":1}\n{"n":2}\n{"n":3}\n{"n":4}\n')
      })

      it('"w" truncates an existing file', async () => {
        const p = join(root, 't.jsonl')
        s.writeTextSync(p, 'a much longer old content\n')
        const w = s.openWriter(p, { flags: 'w' })
        await w.writeLine('new\n')
        await w.close()
        expect(await s.readText(p)).toBe('new\n')
      })

      it('un-awaited writes land whole and in call order; flush waits for them', async () => {
        const p = join(root, 'order.jsonl')
        const w = s.openWriter(p, { flags: 'a' })
        const lines = Array.from({ length: 100 }, (_, i) => `{"i":${i},"pad":"${'é'.repeat(i)}"}\n`)
        const writes = lines.map(async (line) => await w.writeLine(line))
        await w.flush()
        expect(await s.readText(p)).toBe(lines.join(''))
        await Promise.all(writes)
        await w.close()
      })

      it('fsync resolves and keeps everything written', async () => {
        const p = join(root, 'f.jsonl')
        const w = s.openWriter(p, { flags: 'a' })
        await w.writeLine('x\n')
        await expect(w.fsync()).resolves.toBeUndefined()
        await expect(w.fsync()).resolves.toBeUndefined()
        await w.close()
        expect(s.statSync(p).size).toBe(2)
        expect(w.getError()).toBeUndefined()
      })

      it('§12.84 a writer rejects writeLine after close() with Writer closed', async () => {
        const p = join(root, 'c.jsonl')
        const w = s.openWriter(p, { flags: 'a' })
        await w.writeLine('x\n')
        await w.close()
        await w.close() // idempotent
        await expect(w.writeLine('y\n')).rejects.toThrow(/^Writer closed$/)
        await expect(w.writeLine('y\n')).rejects.toMatchObject({ code: 'SS_WRITER_CLOSED' })
        await expect(w.fsync()).rejects.toThrow(/^Writer closed$/)
        expect(w.getError()).toBeUndefined()
        expect(await s.readText(p)).toBe('x\n')
      })

      it('§12.84 getError() returns the first error; later calls rethrow it; onError sees it', async () => {
        const d = join(root, 'is-a-dir.jsonl')
        s.ensureDirSync(d)
        const onError = vi.fn()
        const w = s.openWriter(d, { flags: 'a', onError })
        const first = await w.writeLine('x\n').then(() => undefined, (err: unknown) => err)
        expect(first).toBeInstanceOf(Error)
        expect(first).toMatchObject({ code: 'EISDIR' })
        expect(w.getError()).toBe(first)
        await expect(w.writeLine('y\n')).rejects.toBe(first)
        await expect(w.fsync()).rejects.toBe(first)
        await expect(w.flush()).rejects.toBe(first)
        expect(onError).toHaveBeenCalledTimes(1)
        expect(onError).toHaveBeenCalledWith(first)
        await expect(w.close()).rejects.toBe(first)
        await expect(w.writeLine('z\n')).rejects.toThrow(/^Writer closed$/)
        expect(w.getError()).toBe(first)
      })

      it('writes queued behind a failing one fail with the same error', async () => {
        const d = join(root, 'dir')
        s.ensureDirSync(d)
        const w = s.openWriter(d, { flags: 'w' })
        const results = await Promise.allSettled([w.writeLine('1\n'), w.writeLine('2\n'), w.fsync()])
        const reasons = results.map((r) => r.status === 'rejected' ? r.reason : 'fulfilled')
        expect(reasons[0]).toBeInstanceOf(Error)
        expect(reasons).toEqual([reasons[0], reasons[0], reasons[0]])
        await w.close().catch(() => {})
      })

      it('the atomic rewrite sequence (temp "w", write, fsync, close, rename) replaces the target', async () => {
        const target = join(root, 's', 'x.jsonl')
        s.writeTextSync(target, '{"old":true}\n')
        const tmp = join(root, 's', '.x.jsonl.0011223344556677.tmp')
        const w = s.openWriter(tmp, { flags: 'w' })
        await w.writeLine('{"new":1}\n{"new":2}\n')
        await w.fsync()
        await w.close()
        expect(await s.readText(target)).toBe('{"old":true}\n')
        await s.rename(tmp, target)
        expect(await s.readText(target)).toBe('{"new":1}\n{"new":2}\n')
        expect(s.listFilesSync(join(root, 's'), '*')).toEqual([target])
      })
    })
  })
}
