/**
 * The disk writer never leaves part of a failed write behind: when a `writeLine` fails after some
 * of its bytes reached the file (a short write, then ENOSPC), the file is truncated back to its
 * length before that write and synced (src/storage/durable-fs.ts `writeAllOrUndo`).
 */
import fs from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { FileSessionStorage } from '../../src/storage/file-session-storage.js'
import { installSimulatedDisk, type SimulatedDisk } from '../faults/support/full-disk.js'

type Callback = (err: NodeJS.ErrnoException | null, ...rest: unknown[]) => void

describe('FileSessionStorage writer: a failed write is undone', () => {
  let root: string
  let disk: SimulatedDisk | undefined
  const s = new FileSessionStorage()

  beforeEach(async () => { root = await mkdtemp(join(tmpdir(), 'ss-undo-')) })
  afterEach(async () => {
    disk?.uninstall()
    disk = undefined
    vi.restoreAllMocks()
    await rm(root, { recursive: true, force: true })
  })

  it('a short write followed by ENOSPC leaves the file exactly as before, and the error latches', async () => {
    const p = join(root, 's.jsonl')
    fs.writeFileSync(p, '{"n":1}\n')
    disk = installSimulatedDisk({ root, free: 5 })
    const onError = vi.fn()
    const w = s.openWriter(p, { flags: 'a', onError })
    const err = await w.writeLine('{"n":2,"text":"more than five bytes"}\n').catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'ENOSPC' })
    expect(disk.shortWrites).toBe(1)
    expect(disk.refusals).toBe(1)
    expect(fs.readFileSync(p, 'utf8')).toBe('{"n":1}\n')
    expect(w.getError()).toBe(err)
    expect(onError).toHaveBeenCalledWith(err)
    disk.free = Number.POSITIVE_INFINITY
    await expect(w.writeLine('{"n":3}\n')).rejects.toBe(err)
    await w.close().catch(() => {})
    expect(fs.readFileSync(p, 'utf8')).toBe('{"n":1}\n')
  })

  it('a group-committed batch of several lines is undone as a whole', async () => {
    const p = join(root, 'batch.jsonl')
    disk = installSimulatedDisk({ root })
    const w = s.openWriter(p, { flags: 'a' })
    await w.writeLine('{"h":0}\n')
    disk.free = 20
    await expect(w.writeLine('{"n":1}\n{"n":2}\n{"n":3}\n{"n":4}\n')).rejects.toMatchObject({ code: 'ENOSPC' })
    await w.close().catch(() => {})
    expect(fs.readFileSync(p, 'utf8')).toBe('{"h":0}\n')
  })

  it('truncates and then fdatasyncs the same descriptor, to the length before the write', async () => {
    const p = join(root, 'order.jsonl')
    fs.writeFileSync(p, 'abc\n')
    disk = installSimulatedDisk({ root, free: 3 })
    const truncate = vi.spyOn(fs, 'ftruncate')
    const datasync = vi.spyOn(fs, 'fdatasync')
    const w = s.openWriter(p, { flags: 'a' })
    await expect(w.writeLine('defghij\n')).rejects.toMatchObject({ code: 'ENOSPC' })
    expect(truncate.mock.calls.map((args) => args[1])).toEqual([4])
    expect(datasync).toHaveBeenCalledTimes(1)
    expect(datasync.mock.calls[0]?.[0]).toBe(truncate.mock.calls[0]?.[0])
    expect(truncate.mock.invocationCallOrder[0]).toBeLessThan(datasync.mock.invocationCallOrder[0] ?? 0)
    await w.close().catch(() => {})
  })

  it('a write refused before any byte landed truncates nothing', async () => {
    const p = join(root, 'none.jsonl')
    fs.writeFileSync(p, 'x\n')
    disk = installSimulatedDisk({ root, free: 0 })
    const truncate = vi.spyOn(fs, 'ftruncate')
    const w = s.openWriter(p, { flags: 'a' })
    await expect(w.writeLine('y\n')).rejects.toMatchObject({ code: 'ENOSPC' })
    expect(truncate).not.toHaveBeenCalled()
    await w.close().catch(() => {})
    expect(fs.readFileSync(p, 'utf8')).toBe('x\n')
  })

  it('keeps a torn fragment that was there before the write: only this write\'s bytes go', async () => {
    const p = join(root, 'torn.jsonl')
    fs.writeFileSync(p, '{"n":1}\n{"n":')
    disk = installSimulatedDisk({ root, free: 2 })
    const w = s.openWriter(p, { flags: 'a' })
    await expect(w.writeLine('\n{"n":2}\n')).rejects.toMatchObject({ code: 'ENOSPC' })
    await w.close().catch(() => {})
    expect(fs.readFileSync(p, 'utf8')).toBe('{"n":1}\n{"n":')
  })

  it('a "w" writer (temp file of a rewrite) that fails part-way is left empty', async () => {
    const p = join(root, '.t.jsonl.0123456789abcdef.tmp')
    disk = installSimulatedDisk({ root, free: 10 })
    const w = s.openWriter(p, { flags: 'w' })
    await expect(w.writeLine('{"type":"session","id":"x"}\n')).rejects.toMatchObject({ code: 'ENOSPC' })
    await w.close().catch(() => {})
    expect(fs.readFileSync(p, 'utf8')).toBe('')
  })

  it('when the undo itself fails, the write\'s own error is still the one reported', async () => {
    const p = join(root, 'undo-fails.jsonl')
    fs.writeFileSync(p, 'a\n')
    disk = installSimulatedDisk({ root, free: 1 })
    const eio = Object.assign(new Error('EIO: i/o error, ftruncate'), { code: 'EIO' })
    vi.spyOn(fs, 'ftruncate').mockImplementation(((_fd: number, _len: number, cb: Callback) => { cb(eio) }) as unknown as typeof fs.ftruncate)
    const w = s.openWriter(p, { flags: 'a' })
    await expect(w.writeLine('bcd\n')).rejects.toMatchObject({ code: 'ENOSPC' })
    expect(w.getError()).toMatchObject({ code: 'ENOSPC' })
    await w.close().catch(() => {})
    // The fragment stays (no "\n" at the end): the loader treats it as a torn last line.
    expect(fs.readFileSync(p, 'utf8')).toBe('a\nb')
  })

  it('property: whatever the existing content, line and cut point, a failed write changes nothing', async () => {
    const text = fc.string({ unit: 'binary', maxLength: 40 })
    await fc.assert(fc.asyncProperty(text, fc.array(text, { minLength: 1, maxLength: 4 }), fc.nat(), async (before, lines, cut) => {
      const p = join(root, 'prop.jsonl')
      fs.writeFileSync(p, before)
      const payload = lines.map((l) => JSON.stringify({ l }) + '\n').join('')
      const sim = installSimulatedDisk({ root, free: cut % Buffer.byteLength(payload) })
      try {
        const w = s.openWriter(p, { flags: 'a' })
        await expect(w.writeLine(payload)).rejects.toMatchObject({ code: 'ENOSPC' })
        await w.close().catch(() => {})
      } finally {
        sim.uninstall()
      }
      expect(fs.readFileSync(p, 'utf8')).toBe(before)
    }), { numRuns: 60, seed: 20260314 })
  })
})
