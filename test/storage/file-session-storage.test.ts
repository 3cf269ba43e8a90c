import fs from 'node:fs'
import { mkdtemp, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { FileSessionStorage } from '../../src/storage/file-session-storage.js'
import { storageContract } from './contract.js'

async function tempRoot (): Promise<string> {
  return await mkdtemp(join(tmpdir(), 'ss-storage-'))
}

storageContract('FileSessionStorage', async () => {
  const root = await tempRoot()
  return { storage: new FileSessionStorage(), root, cleanup: async () => await rm(root, { recursive: true, force: true }) }
})

type Callback = (err: NodeJS.ErrnoException | null, ...rest: unknown[]) => void

/** Spies on `fs.open` (passing through) and records which path each returned fd belongs to. */
function trackOpens (): Map<number, string> {
  const opened = new Map<number, string>()
  const real = fs.open
  vi.spyOn(fs, 'open').mockImplementation(((path: string, flags: string | number, cb: Callback) => {
    real(path, flags, (err, fd) => {
      if (err === null) opened.set(fd, String(path))
      cb(err, fd)
    })
  }) as unknown as typeof fs.open)
  return opened
}

function fdsCalledWith (spy: { mock: { calls: unknown[][] } }): number[] {
  return spy.mock.calls.map((args) => args[0] as number)
}

describe('FileSessionStorage (disk only)', () => {
  let root: string
  let s: FileSessionStorage
  beforeEach(async () => {
    root = await tempRoot()
    s = new FileSessionStorage()
  })
  afterEach(async () => {
    vi.restoreAllMocks()
    await rm(root, { recursive: true, force: true })
  })

  describe('durability', () => {
    it('fsync uses fdatasync on the file, never a full fsync of it', async () => {
      const opened = trackOpens()
      const datasync = vi.spyOn(fs, 'fdatasync')
      const fullSync = vi.spyOn(fs, 'fsync')
      const p = join(root, 'a.jsonl')
      const w = s.openWriter(p, { flags: 'a' })
      await w.writeLine('x\n')
      await w.fsync()
      await w.close()
      const fileFds = [...opened].filter(([, path]) => path === p).map(([fd]) => fd)
      expect(fileFds).toHaveLength(1)
      expect(fdsCalledWith(datasync)).toEqual(fileFds)
      expect(fdsCalledWith(fullSync).filter((fd) => opened.get(fd) === p)).toEqual([])
    })

    it('the first fsync of a writer that created its file syncs the parent directory once, after fdatasync', async () => {
      const datasync = vi.spyOn(fs, 'fdatasync')
      const syncDir = vi.spyOn(s, 'syncDir')
      const p = join(root, 'sessions', 'new.jsonl')
      const w = s.openWriter(p, { flags: 'a' })
      await w.writeLine('1\n')
      expect(syncDir).not.toHaveBeenCalled()
      await w.fsync()
      await w.writeLine('2\n')
      await w.fsync()
      await w.close()
      expect(syncDir.mock.calls).toEqual([[dirname(p)]])
      expect(datasync).toHaveBeenCalledTimes(2)
      expect(datasync.mock.invocationCallOrder[0]).toBeLessThan(syncDir.mock.invocationCallOrder[0] ?? 0)
    })

    it('a writer that did not create its file never syncs the directory', async () => {
      const p = join(root, 'old.jsonl')
      s.writeTextSync(p, 'old\n')
      const syncDir = vi.spyOn(s, 'syncDir')
      for (const flags of ['a', 'w'] as const) {
        const w = s.openWriter(p, { flags })
        await w.writeLine('x\n')
        await w.fsync()
        await w.close()
      }
      expect(syncDir).not.toHaveBeenCalled()
    })

    it('a "w" writer that creates its file syncs the directory too', async () => {
      const syncDir = vi.spyOn(s, 'syncDir')
      const p = join(root, '.t.jsonl.0000000000000000.tmp')
      const w = s.openWriter(p, { flags: 'w' })
      await w.writeLine('x\n')
      await w.fsync()
      await w.close()
      expect(syncDir.mock.calls).toEqual([[root]])
    })

    it('syncDir opens the directory and fsyncs that descriptor', async () => {
      const opened = trackOpens()
      const fullSync = vi.spyOn(fs, 'fsync')
      await s.syncDir(root)
      expect(fdsCalledWith(fullSync).map((fd) => opened.get(fd))).toEqual([root])
    })

    it('syncDir of a missing directory rejects with ENOENT', async () => {
      await expect(s.syncDir(join(root, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' })
    })

    it('rename syncs the destination directory after the rename has happened', async () => {
      const from = join(root, 'a', 'x.tmp')
      const to = join(root, 'b', 'x.jsonl')
      s.writeTextSync(from, 'new\n')
      s.ensureDirSync(join(root, 'b'))
      const seen: Array<[boolean, boolean]> = []
      const real = s.syncDir.bind(s)
      const syncDir = vi.spyOn(s, 'syncDir').mockImplementation(async (dir) => {
        seen.push([fs.existsSync(from), fs.existsSync(to)])
        await real(dir)
      })
      await s.rename(from, to)
      expect(syncDir.mock.calls).toEqual([[join(root, 'b')]])
      expect(seen).toEqual([[false, true]])
    })

    it('ensureDirSync fsyncs the parent of every directory it creates, and nothing when it creates none', () => {
      const openSync = vi.spyOn(fs, 'openSync')
      const fsyncSync = vi.spyOn(fs, 'fsyncSync')
      s.ensureDirSync(join(root, 'a', 'b', 'c'))
      expect(openSync.mock.calls.map((args) => args[0]).sort()).toEqual([root, join(root, 'a'), join(root, 'a', 'b')])
      expect(fsyncSync).toHaveBeenCalledTimes(3)
      openSync.mockClear()
      s.ensureDirSync(join(root, 'a', 'b', 'c'))
      expect(openSync).not.toHaveBeenCalled()
    })
  })

  describe('writer', () => {
    it('holds one file descriptor for its lifetime and closes it once', async () => {
      const opened = trackOpens()
      const close = vi.spyOn(fs, 'close')
      const p = join(root, 'one.jsonl')
      const w = s.openWriter(p, { flags: 'a' })
      for (let i = 0; i < 3; i++) {
        await w.writeLine(`${i}\n`)
        await w.fsync()
      }
      await w.close()
      await w.close()
      const fileFds = [...opened].filter(([, path]) => path === p).map(([fd]) => fd)
      expect(fileFds).toHaveLength(1)
      expect(fdsCalledWith(close).filter((fd) => fileFds.includes(fd))).toEqual(fileFds)
    })

    it('writeLine loops over partial writes until every byte is out', async () => {
      const real = fs.write
      const write = vi.spyOn(fs, 'write').mockImplementation(((fd: number, buf: Uint8Array, off: number,
        len: number, pos: null, cb: Callback) => real(fd, buf, off, Math.min(len, 3), pos, cb)) as unknown as typeof fs.write)
      const p = join(root, 'partial.jsonl')
      const w = s.openWriter(p, { flags: 'a' })
      const line = '{"text":"héllo wörld"}\n'
      await w.writeLine(line)
      await w.close()
      expect(fs.readFileSync(p, 'utf8')).toBe(line)
      expect(write.mock.calls.length).toBe(Math.ceil(Buffer.byteLength(line) / 3))
    })

    it('a zero-byte write is the error Short write; earlier lines stay intact, the partial one is undone', async () => {
      const p = join(root, 'short.jsonl')
      const onError = vi.fn()
      const w = s.openWriter(p, { flags: 'a', onError })
      await w.writeLine('{"n":1}\n')
      const real = fs.write
      let calls = 0
      vi.spyOn(fs, 'write').mockImplementation(((fd: number, buf: Uint8Array, off: number, len: number,
        pos: null, cb: Callback) => {
        calls++
        if (calls === 1) real(fd, buf, off, 4, pos, cb)
        else cb(null, 0, buf)
      }) as unknown as typeof fs.write)
      await expect(w.writeLine('{"n":2}\n')).rejects.toThrow(/^Short write$/)
      expect(w.getError()).toMatchObject({ code: 'SS_SHORT_WRITE' })
      expect(onError).toHaveBeenCalledWith(w.getError())
      await expect(w.writeLine('{"n":3}\n')).rejects.toBe(w.getError())
      await w.close().catch(() => {})
      expect(fs.readFileSync(p, 'utf8')).toBe('{"n":1}\n')
    })

    it('a failing fdatasync latches: fsync rejects and later writes rethrow the same error', async () => {
      const eio = Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })
      vi.spyOn(fs, 'fdatasync').mockImplementation(((_fd: number, cb: Callback) => { cb(eio) }) as typeof fs.fdatasync)
      const onError = vi.fn()
      const w = s.openWriter(join(root, 'eio.jsonl'), { flags: 'a', onError })
      await w.writeLine('x\n')
      await expect(w.fsync()).rejects.toBe(eio)
      await expect(w.writeLine('y\n')).rejects.toBe(eio)
      expect(w.getError()).toBe(eio)
      expect(onError.mock.calls).toEqual([[eio]])
    })

    it('close is best effort: it releases the fd and reports a close error once latched', async () => {
      const p = join(root, 'close.jsonl')
      const w = s.openWriter(p, { flags: 'a' })
      await w.writeLine('x\n')
      const boom = Object.assign(new Error('EIO: close'), { code: 'EIO' })
      const real = fs.close
      const close = vi.spyOn(fs, 'close').mockImplementation(((fd: number, cb: Callback) => {
        real(fd, () => { cb(boom) })
      }) as unknown as typeof fs.close)
      const first = w.close()
      expect(w.close()).toBe(first)
      await expect(first).rejects.toBe(boom)
      expect(w.getError()).toBe(boom)
      expect(close).toHaveBeenCalledTimes(1)
      expect(fs.readFileSync(p, 'utf8')).toBe('x\n')
    })
  })

  describe('reads and listing', () => {
    it('readTextPrefix reads no more than maxBytes from the file', async () => {
      const p = join(root, 'big.jsonl')
      s.writeTextSync(p, 'x'.repeat(1_000_000))
      const probe = await fs.promises.open(p, 'r')
      const proto = Object.getPrototypeOf(probe) as { read: (...args: unknown[]) => unknown }
      await probe.close()
      const read = vi.spyOn(proto, 'read')
      expect(await s.readTextPrefix(p, 4096)).toBe('x'.repeat(4096))
      const requested = read.mock.calls.reduce((sum, args) => sum + (args[2] as number), 0)
      expect(read).toHaveBeenCalled()
      expect(requested).toBeLessThanOrEqual(4096)
    })

    it('listFilesSync lists regular files only (no symlinks)', async () => {
      s.writeTextSync(join(root, 'real.jsonl'), 'x')
      await symlink(join(root, 'real.jsonl'), join(root, 'link.jsonl'))
      expect(s.listFilesSync(root, '*.jsonl')).toEqual([join(root, 'real.jsonl')])
    })

    it('listFilesSync returns [] when dir is a file', () => {
      s.writeTextSync(join(root, 'f'), 'x')
      expect(s.listFilesSync(join(root, 'f'), '*')).toEqual([])
    })
  })
})
