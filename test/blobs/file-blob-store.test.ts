import fs from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { FileBlobStore } from '../../src/blobs/index.js'
import { ABC_HASH, blobContract } from './contract.js'

blobContract('FileBlobStore', async () => {
  const root = await mkdtemp(join(tmpdir(), 'ss-blobs-'))
  const dir = join(root, 'blobs')
  return {
    store: new FileBlobStore(dir),
    count: async () => (await readdir(dir).catch(() => [])).length,
    cleanup: async () => await rm(root, { recursive: true, force: true }),
  }
})

type Callback = (err: NodeJS.ErrnoException | null, ...rest: unknown[]) => void

describe('FileBlobStore (disk only)', () => {
  let root: string
  let dir: string
  let store: FileBlobStore
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'ss-blobs-'))
    dir = join(root, 'data', 'blobs')
    store = new FileBlobStore(dir)
  })
  afterEach(async () => {
    vi.restoreAllMocks()
    await rm(root, { recursive: true, force: true })
  })

  it('creates the blobs directory on demand and stores raw bytes at <dir>/<hash>', async () => {
    await store.put(Buffer.from('abc'))
    expect(await readdir(dir)).toEqual([ABC_HASH])
    expect(await readFile(join(dir, ABC_HASH), 'utf8')).toBe('abc')
  })

  it('ignores a temp file left by a crash, and a later put still stores the blob', async () => {
    await mkdir(dir, { recursive: true })
    const stale = join(dir, `.${ABC_HASH}.0123456789abcdef.tmp`)
    await writeFile(stale, 'a')
    expect(await store.has(ABC_HASH)).toBe(false)
    expect(await store.get(ABC_HASH)).toBeNull()
    const result = await store.put(Buffer.from('abc'))
    expect(result.created).toBe(true)
    expect((await store.get(ABC_HASH))?.toString()).toBe('abc')
    expect(await readFile(stale, 'utf8')).toBe('a')
  })

  it('put syncs the temp file, renames it into place, then syncs the directory', async () => {
    const opened = new Map<number, string>()
    const realOpen = fs.open
    vi.spyOn(fs, 'open').mockImplementation(((path: string, flags: string | number, cb: Callback) => {
      realOpen(path, flags, (err, fd) => {
        if (err === null) opened.set(fd, String(path))
        cb(err, fd)
      })
    }) as unknown as typeof fs.open)
    const events: string[] = []
    const realFsync = fs.fsync
    vi.spyOn(fs, 'fsync').mockImplementation(((fd: number, cb: Callback) => {
      events.push(`fsync ${opened.get(fd) ?? '?'}`)
      realFsync(fd, cb)
    }) as typeof fs.fsync)
    const realRename = fs.promises.rename
    vi.spyOn(fs.promises, 'rename').mockImplementation(async (from, to) => {
      events.push(`rename ${String(from)} -> ${String(to)}`)
      await realRename(from, to)
    })
    await store.put(Buffer.from('abc'))
    const tmp = events.find((e) => e.endsWith('.tmp'))?.slice('fsync '.length) ?? ''
    expect(tmp).toMatch(new RegExp(`^${dir}/\\.${ABC_HASH}\\.[0-9a-f]{16}\\.tmp$`))
    expect(events).toEqual([
      `fsync ${join(root, 'data')}`, `fsync ${root}`, // the directories put had to create
      `fsync ${tmp}`, `rename ${tmp} -> ${join(dir, ABC_HASH)}`, `fsync ${dir}`,
    ])
  })

  it('a failed write leaves no blob and no temp file behind', async () => {
    const enospc = Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })
    vi.spyOn(fs, 'write').mockImplementation(((...args: unknown[]) => {
      (args[args.length - 1] as Callback)(enospc)
    }) as unknown as typeof fs.write)
    await expect(store.put(Buffer.from('abc'))).rejects.toBe(enospc)
    vi.restoreAllMocks()
    expect(await readdir(dir)).toEqual([])
    expect(await store.has(ABC_HASH)).toBe(false)
  })

  it('a put of bytes already on disk (from another process) writes nothing and reports created: false', async () => {
    await mkdir(dir, { recursive: true })
    await writeFile(join(dir, ABC_HASH), 'abc')
    const rename = vi.spyOn(fs.promises, 'rename')
    expect((await store.put(Buffer.from('abc'))).created).toBe(false)
    expect(rename).not.toHaveBeenCalled()
  })

  it('a second store over the same directory sees the blobs of the first', async () => {
    await store.put(Buffer.from('abc'))
    expect(await new FileBlobStore(dir).has(ABC_HASH)).toBe(true)
  })
})
