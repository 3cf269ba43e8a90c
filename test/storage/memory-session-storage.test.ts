import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createStorage, FileSessionStorage, MemorySessionStorage } from '../../src/storage/index.js'
import { storageContract } from './contract.js'

let fixtureCount = 0
storageContract('MemorySessionStorage', async () => ({
  storage: new MemorySessionStorage(),
  root: `/mem/t${++fixtureCount}`,
  cleanup: async () => {},
}))

function enospc (path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOSPC: no space left on device, write '${path}'`), { code: 'ENOSPC' })
}

describe('MemorySessionStorage (memory only)', () => {
  afterEach(() => { vi.restoreAllMocks() })

  it('§12.82 statSync size of "é\\n" is 3; readText of a missing path rejects with ENOENT; listFilesSync returns direct children only; mtimes strictly increase', async () => {
    const s = new MemorySessionStorage()
    s.writeTextSync('/d/e.txt', 'é\n')
    expect(s.statSync('/d/e.txt').size).toBe(3)

    await expect(s.readText('/d/missing.jsonl')).rejects.toMatchObject({ code: 'ENOENT' })

    s.writeTextSync('/d/s/a.jsonl', 'a')
    s.writeTextSync('/d/s/deeper/b.jsonl', 'b')
    expect(s.listFilesSync('/d/s', '*.jsonl')).toEqual(['/d/s/a.jsonl'])
    expect(s.listFilesSync('/d', '*')).toEqual(['/d/e.txt'])

    vi.spyOn(Date, 'now').mockReturnValue(1_000)
    const mtimes: number[] = []
    for (let i = 0; i < 5; i++) {
      s.writeTextSync(`/d/m${i}.jsonl`, 'x')
      mtimes.push(s.statSync(`/d/m${i}.jsonl`).mtimeMs)
    }
    const w = s.openWriter('/d/m0.jsonl', { flags: 'a' })
    await w.writeLine('y\n')
    mtimes.push(s.statSync('/d/m0.jsonl').mtimeMs)
    for (let i = 1; i < mtimes.length; i++) expect(mtimes[i]).toBeGreaterThan(mtimes[i - 1] ?? Infinity)
  })

  it('mtimeMs follows the clock when it is ahead: max(Date.now(), last + 1)', () => {
    const s = new MemorySessionStorage()
    const now = vi.spyOn(Date, 'now').mockReturnValue(5_000)
    s.writeTextSync('/a', '1')
    expect(s.statSync('/a').mtimeMs).toBe(5_000)
    s.writeTextSync('/b', '1')
    expect(s.statSync('/b').mtimeMs).toBe(5_001)
    now.mockReturnValue(9_000)
    s.writeTextSync('/c', '1')
    expect(s.statSync('/c').mtime).toEqual(new Date(9_000))
  })

  it('a directory prefix of a file exists; a mere string prefix does not', () => {
    const s = new MemorySessionStorage()
    s.writeTextSync('/data/sessions/--x--/f.jsonl', 'x')
    expect(s.existsSync('/data/sessions')).toBe(true)
    expect(s.existsSync('/data/sessions/')).toBe(true)
    expect(s.existsSync('/data/sess')).toBe(false)
    expect(s.listFilesSync('/data/sessions/--x--/', '*')).toEqual(['/data/sessions/--x--/f.jsonl'])
  })

  it('instances share nothing', () => {
    const a = new MemorySessionStorage()
    const b = new MemorySessionStorage()
    a.writeTextSync('/f', 'x')
    expect(b.existsSync('/f')).toBe(false)
  })

  it('fsync changes nothing and never fails on its own', async () => {
    const s = new MemorySessionStorage()
    const w = s.openWriter('/f.jsonl', { flags: 'a' })
    await w.writeLine('x\n')
    const before = s.statSync('/f.jsonl')
    await w.fsync()
    expect(s.statSync('/f.jsonl')).toEqual(before)
    expect(await s.readText('/f.jsonl')).toBe('x\n')
  })

  it('a writer keeps writing to its file after that file was renamed, like a descriptor', async () => {
    const s = new MemorySessionStorage()
    const w = s.openWriter('/a.jsonl', { flags: 'a' })
    await w.writeLine('1\n')
    await s.rename('/a.jsonl', '/b.jsonl')
    await w.writeLine('2\n')
    expect(await s.readText('/b.jsonl')).toBe('1\n2\n')
    expect(s.existsSync('/a.jsonl')).toBe(false)
  })

  describe('failure injection', () => {
    it('failWrites makes writeLine fail for one path only; the error latches and reaches onError', async () => {
      const s = new MemorySessionStorage({ failWrites: (p, op) => p === '/full.jsonl' && op === 'writeLine' ? enospc(p) : undefined })
      const onError = vi.fn()
      const bad = s.openWriter('/full.jsonl', { flags: 'a', onError })
      const good = s.openWriter('/ok.jsonl', { flags: 'a' })
      await expect(bad.writeLine('x\n')).rejects.toMatchObject({ code: 'ENOSPC' })
      await good.writeLine('y\n')
      expect(bad.getError()).toMatchObject({ code: 'ENOSPC' })
      await expect(bad.fsync()).rejects.toBe(bad.getError())
      expect(onError).toHaveBeenCalledTimes(1)
      expect(await s.readText('/full.jsonl')).toBe('')
      expect(await s.readText('/ok.jsonl')).toBe('y\n')
    })

    it('failWrites can fail fsync, writeText and rename, changing nothing', async () => {
      const fail = new Set<string>()
      const s = new MemorySessionStorage({ failWrites: (p, op) => fail.has(`${op} ${p}`) ? enospc(p) : undefined })
      s.writeTextSync('/t.jsonl', 'old\n')
      s.writeTextSync('/tmp.jsonl', 'new\n')
      fail.add('writeText /t.jsonl').add('rename /t.jsonl').add('fsync /w.jsonl')
      expect(() => { s.writeTextSync('/t.jsonl', 'x') }).toThrow(/ENOSPC/)
      await expect(s.writeText('/t.jsonl', 'x')).rejects.toMatchObject({ code: 'ENOSPC' })
      await expect(s.rename('/tmp.jsonl', '/t.jsonl')).rejects.toMatchObject({ code: 'ENOSPC' })
      expect(await s.readText('/t.jsonl')).toBe('old\n')
      expect(await s.readText('/tmp.jsonl')).toBe('new\n')
      const w = s.openWriter('/w.jsonl', { flags: 'a' })
      await w.writeLine('z\n')
      await expect(w.fsync()).rejects.toMatchObject({ code: 'ENOSPC' })
      await expect(w.writeLine('again\n')).rejects.toMatchObject({ code: 'ENOSPC' })
    })
  })
})

describe('createStorage', () => {
  it('returns the adapter of the requested kind, fresh each time', () => {
    expect(createStorage('disk')).toBeInstanceOf(FileSessionStorage)
    const a = createStorage('memory')
    expect(a).toBeInstanceOf(MemorySessionStorage)
    a.writeTextSync(join('/x', 'f'), 'x')
    expect(createStorage('memory').existsSync('/x/f')).toBe(false)
  })
})
