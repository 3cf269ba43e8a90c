/**
 * Blob externalization and resolution through the manager on real files (SPEC.md §9.3–§9.5).
 * Acceptance scenarios 76–79 and 81.
 */
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { BlobStore } from '../../src/blobs/types.js'
import { SessionManager } from '../../src/session/session-manager.js'
import { FileSessionStorage } from '../../src/storage/file-session-storage.js'
import { assistant, makeSessionEnv, user, type SessionEnv } from '../helpers/session-env.js'
import { spyStorage, type SpyStorage } from '../helpers/spy-storage.js'

let env: SessionEnv
let spy: SpyStorage
let blobs: BlobStore
beforeEach(() => {
  spy = spyStorage(new FileSessionStorage())
  env = makeSessionEnv(spy.storage)
  const inner = env.options.blobs!
  // Records each completed put in the same log as the storage calls.
  blobs = {
    put: async (bytes) => {
      const result = await inner.put(bytes)
      spy.ops.push(`blobPut:${result.hash}`)
      return result
    },
    get: async (hash) => await inner.get(hash),
    has: async (hash) => await inner.has(hash),
    scan: () => inner.scan(),
    remove: async (hashes, before) => await inner.remove(hashes, before),
    usage: async () => await inner.usage(),
  }
})
afterEach(() => env.cleanup())

const options = () => ({ ...env.options, blobs })
const create = async (cwd = '/work/pi') => await SessionManager.create(cwd, undefined, env.storage, options())
const open = async (path: string) => await SessionManager.open(path, undefined, env.storage, options())
const blobPath = (hash: string) => join(env.dataDir, 'blobs', hash)
const sha256 = (base64: string) => createHash('sha256').update(Buffer.from(base64, 'base64')).digest('hex')
const imageOf = (chars: number) => randomBytes(Math.ceil(chars * 3 / 4) + 3).toString('base64').slice(0, chars)
const blobFiles = () => env.files().filter((f) => f.startsWith('blobs/'))
type Block = Record<string, unknown>
const contentOf = (record: Record<string, unknown> | undefined): Block[] =>
  (record?.message as { content: Block[] } | undefined)?.content ?? (record?.content as Block[])

describe('externalization on write (SPEC.md §9.3, §9.4)', () => {
  it('§12.76 a 1,024-char image is stored as blob:sha256:<hash of the decoded bytes>, its blob written before the line; 1,023 chars stay inline', async () => {
    const big = imageOf(1024)
    const small = imageOf(1023)
    expect(big).toHaveLength(1024)
    expect(small).toHaveLength(1023)
    const hash = sha256(big)
    const m = await create()
    const name = basename(m.getSessionFile()!)
    const blobExistsAtWrite: boolean[] = []
    spy.fail = (op, path) => {
      if (op === 'writeLine' && basename(path) === name) blobExistsAtWrite.push(existsSync(blobPath(hash)))
      return undefined
    }
    const u = m.appendMessage({ role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image', mimeType: 'image/png', data: big }], timestamp: 1 })
    const s = m.appendMessage({ role: 'user', content: [{ type: 'image', mimeType: 'image/jpeg', data: small }], timestamp: 2 })
    m.appendMessage(assistant())
    await m.flush()

    const disk = new Map(env.readJsonl(m.getSessionFile()!).map((r) => [r.id, r]))
    expect(contentOf(disk.get(u))[1]).toEqual({ type: 'image', mimeType: 'image/png', data: `blob:sha256:${hash}` })
    expect(contentOf(disk.get(s))[0]).toEqual({ type: 'image', mimeType: 'image/jpeg', data: small })
    expect(readFileSync(blobPath(hash))).toEqual(Buffer.from(big, 'base64'))
    expect(blobFiles()).toEqual([`blobs/${hash}`])
    // The blob was stored, durably, before the line that references it was written.
    expect(blobExistsAtWrite).toEqual([true])
    const put = spy.ops.indexOf(`blobPut:${hash}`)
    const write = spy.ops.indexOf(`writeLine:${name}`)
    expect(put).toBeGreaterThanOrEqual(0)
    expect(put).toBeLessThan(write)
    // In memory the data is unchanged.
    expect(contentOf(m.getEntry(u) as Record<string, unknown>)[1]!.data).toBe(big)
  })

  it('§12.76 incremental appends also store the blob before the line', async () => {
    const m = await create()
    m.appendMessage(assistant())
    await m.flush()
    const name = basename(m.getSessionFile()!)
    const big = imageOf(4096)
    const hash = sha256(big)
    const seen: boolean[] = []
    spy.fail = (op, path) => {
      if (op === 'writeLine' && basename(path) === name) seen.push(existsSync(blobPath(hash)))
      return undefined
    }
    spy.ops.length = 0
    const c = m.appendCustomMessageEntry('screenshot', [{ type: 'image', mimeType: 'image/png', data: big }], true)
    await m.flush()
    expect(seen).toEqual([true])
    expect(spy.ops.indexOf(`blobPut:${hash}`)).toBeLessThan(spy.ops.indexOf(`writeLine:${name}`))
    const stored = env.readJsonl(m.getSessionFile()!).find((r) => r.id === c)!
    expect(contentOf(stored)[0]!.data).toBe(`blob:sha256:${hash}`)
  })

  it('§12.77 an image inside details.x.content is stored as a ref and, as the agents read it, resolved again after reload', async () => {
    const big = imageOf(2000)
    const hash = sha256(big)
    const m = await create()
    m.appendMessage(user())
    const t = m.appendMessage({
      role: 'toolResult',
      toolCallId: 'c1',
      toolName: 'screenshot',
      content: [{ type: 'text', text: 'taken' }],
      details: { x: { content: [{ type: 'image', mimeType: 'image/png', data: big }] } },
      isError: false,
      timestamp: 1,
    })
    m.appendMessage(assistant())
    await m.close()
    const nested = (record: Record<string, unknown>) =>
      ((record.message as { details: { x: { content: Block[] } } }).details.x.content[0]!)
    const stored = env.readJsonl(m.getSessionFile()!).find((r) => r.id === t)!
    expect(nested(stored)).toEqual({ type: 'image', mimeType: 'image/png', data: `blob:sha256:${hash}` })
    expect(existsSync(blobPath(hash))).toBe(true)
    expect(nested(m.getEntry(t)!).data).toBe(big)
    const reopened = await open(m.getSessionFile()!)
    expect(nested(reopened.getEntry(t)!).data).toBe(big)
    expect(env.logs.filter((l) => l.level === 'warn')).toEqual([])
  })

  it('an image block outside any content array is an ordinary string and stays inline', async () => {
    const big = imageOf(2000)
    const m = await create()
    const id = m.appendMessage({ ...assistant(), details: { preview: { type: 'image', mimeType: 'image/png', data: big } } })
    await m.flush()
    const stored = env.readJsonl(m.getSessionFile()!).find((r) => r.id === id)!
    expect((stored.message as { details: { preview: Block } }).details.preview.data).toBe(big)
    expect(blobFiles()).toEqual([])
  })
})

describe('resolution on load (SPEC.md §9.5)', () => {
  it('§12.78 reload restores message and custom_message image refs to their base64 data', async () => {
    const a = imageOf(1024)
    const b = imageOf(3000)
    const m = await create()
    const u = m.appendMessage({ role: 'user', content: [{ type: 'text', text: 'two' }, { type: 'image', mimeType: 'image/png', data: a }], timestamp: 1 })
    const r = m.appendMessage({ role: 'toolResult', toolCallId: 'c', toolName: 'shot', content: [{ type: 'image', mimeType: 'image/webp', data: b }], isError: false, timestamp: 2 })
    const c = m.appendCustomMessageEntry('ext', [{ type: 'text', text: 'img' }, { type: 'image', mimeType: 'image/gif', data: b }], true)
    m.appendMessage(assistant())
    await m.close()
    const disk = new Map(env.readJsonl(m.getSessionFile()!).map((rec) => [rec.id, rec]))
    expect(contentOf(disk.get(u))[1]!.data).toBe(`blob:sha256:${sha256(a)}`)
    expect(contentOf(disk.get(r))[0]!.data).toBe(`blob:sha256:${sha256(b)}`)
    expect(contentOf(disk.get(c))[1]!.data).toBe(`blob:sha256:${sha256(b)}`)
    const bytesBefore = readFileSync(m.getSessionFile()!)

    const reopened = await open(m.getSessionFile()!)
    expect(contentOf(reopened.getEntry(u))[1]).toEqual({ type: 'image', mimeType: 'image/png', data: a })
    expect(contentOf(reopened.getEntry(r))[0]).toEqual({ type: 'image', mimeType: 'image/webp', data: b })
    expect(contentOf(reopened.getEntry(c))[1]).toEqual({ type: 'image', mimeType: 'image/gif', data: b })
    expect(reopened.getEntries()).toEqual(m.getEntries())
    // Resolution changes memory, never the file.
    expect(readFileSync(m.getSessionFile()!)).toEqual(bytesBefore)
  })

  it('§12.79 a missing blob leaves the ref in place and logs Blob not found for image reference with the hash', async () => {
    const big = imageOf(1500)
    const hash = sha256(big)
    const m = await create()
    const u = m.appendMessage({ role: 'user', content: [{ type: 'image', mimeType: 'image/png', data: big }], timestamp: 1 })
    m.appendMessage(assistant())
    await m.close()
    rmSync(blobPath(hash))
    const reopened = await open(m.getSessionFile()!)
    expect(contentOf(reopened.getEntry(u))[0]).toEqual({ type: 'image', mimeType: 'image/png', data: `blob:sha256:${hash}` })
    const warnings = env.logs.filter((l) => l.msg === 'Blob not found for image reference')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]!.level).toBe('warn')
    expect(warnings[0]!.obj.hash).toBe(hash)
    expect(reopened.getLatchedError()).toBeUndefined()
    // The ref is written back unchanged by later writes.
    await reopened.rewriteEntries()
    expect(contentOf(env.readJsonl(m.getSessionFile()!).find((r) => r.id === u))[0]!.data).toBe(`blob:sha256:${hash}`)
  })

  it('resolves a ref another writer spelled with \\u escapes, and a ref in a line cut across read chunks', async () => {
    const a = imageOf(1200)
    const b = imageOf(2000)
    const m = await create()
    const u = m.appendMessage({ role: 'user', content: [{ type: 'image', mimeType: 'image/png', data: a }], timestamp: 1 })
    // Enough text before the second image that its line crosses a 64 KiB chunk of the read.
    const v = m.appendMessage({ role: 'user', content: [{ type: 'text', text: 'x'.repeat(70_000) }, { type: 'image', mimeType: 'image/png', data: b }], timestamp: 2 })
    m.appendMessage(assistant())
    await m.close()
    const file = m.getSessionFile()!
    const text = readFileSync(file, 'utf8')
    // The same ref, every character of `blob:sha256:` written as an escape (still the same JSON string).
    const spelled = `blob:sha256:${sha256(a)}`
    const escaped = [...'blob:sha256:'].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('') + sha256(a)
    expect(text).toContain(spelled)
    writeFileSync(file, text.replace(spelled, escaped))
    expect(readFileSync(file, 'utf8')).not.toContain(spelled)

    const reopened = await open(file)
    expect(contentOf(reopened.getEntry(u))[0]).toEqual({ type: 'image', mimeType: 'image/png', data: a })
    expect(contentOf(reopened.getEntry(v))[1]).toEqual({ type: 'image', mimeType: 'image/png', data: b })
  })
})

describe('sharing (SPEC.md §9.4)', () => {
  it('§12.81 the same image in two sessions produces one blob file', async () => {
    const big = imageOf(2048)
    const hash = sha256(big)
    const sessions = [await create('/work/one'), await create('/work/two')]
    for (const m of sessions) {
      m.appendMessage({ role: 'user', content: [{ type: 'image', mimeType: 'image/png', data: big }], timestamp: 1 })
      m.appendMessage(assistant())
    }
    await Promise.all(sessions.map(async (m) => { await m.flush() }))
    expect(blobFiles()).toEqual([`blobs/${hash}`])
    for (const m of sessions) {
      expect(contentOf(env.readJsonl(m.getSessionFile()!)[1])[0]!.data).toBe(`blob:sha256:${hash}`)
    }
    expect(sessions[0]!.getSessionFile()).not.toBe(sessions[1]!.getSessionFile())
    expect(readFileSync(blobPath(hash))).toEqual(Buffer.from(big, 'base64'))
  })
})
