import { createHash, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { BlobPutResult, BlobRef, BlobStat, BlobStore, BlobUsage } from '../../src/blobs/types.js'
import {
  BLOB_REF_RE, isBlobRef, prepareRecordForWrite, resolveBlobRefs, serializeRecord,
} from '../../src/session/persist-transform.js'
import { MAX_PERSIST_CHARS, TRUNCATION_NOTICE, type FileRecord } from '../../src/session/types.js'

/** In-memory BlobStore that records every call; `put` resolves after a macrotask. */
class FakeBlobStore implements BlobStore {
  readonly blobs = new Map<string, Buffer>()
  readonly calls: string[] = []
  async put (bytes: Uint8Array): Promise<BlobPutResult> {
    this.calls.push('put')
    await new Promise((resolve) => setTimeout(resolve, 1))
    const hash = createHash('sha256').update(bytes).digest('hex')
    const created = !this.blobs.has(hash)
    this.blobs.set(hash, Buffer.from(bytes))
    return { hash, ref: `blob:sha256:${hash}` as BlobRef, created }
  }

  async get (hash: string): Promise<Buffer | null> {
    this.calls.push(`get ${hash}`)
    return this.blobs.get(hash) ?? null
  }

  async has (hash: string): Promise<boolean> {
    this.calls.push(`has ${hash}`)
    return this.blobs.has(hash)
  }

  async * scan (): AsyncIterable<BlobStat> {}
  async remove (): Promise<BlobStat[]> { return [] }
  async usage (): Promise<BlobUsage> { return { blobs: this.blobs.size, bytes: 0 } }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const sha = (b64: string) => createHash('sha256').update(Buffer.from(b64, 'base64')).digest('hex')
/** Base64 of `n` random bytes, `length` characters when n is a multiple of 3. */
const imageData = (bytes: number) => randomBytes(bytes).toString('base64')
const image = (data: string) => ({ type: 'image', data, mimeType: 'image/png' })
const message = (content: unknown, extra: FileRecord = {}): FileRecord => ({
  type: 'message',
  id: 'm1',
  parentId: null,
  timestamp: '2026-03-14T15:04:09.412Z',
  message: { role: 'user', content, ...extra },
})

describe('truncation (§9.2)', () => {
  it('§12.71 a 600,000-unit string is stored as 500,000 units ending with the notice; 500,000 stays', async () => {
    const store = new FakeBlobStore()
    const long = 'x'.repeat(600_000)
    const record = message([{ type: 'toolResult', text: long }])
    const snapshot = structuredClone(record)
    const stored = await prepareRecordForWrite(record, store)
    const text = ((stored.message as any).content[0].text) as string
    expect(text).toHaveLength(MAX_PERSIST_CHARS)
    expect(text.endsWith(TRUNCATION_NOTICE)).toBe(true)
    expect(text.startsWith('x'.repeat(499_953))).toBe(true)
    expect(record).toEqual(snapshot) // in-memory value unchanged

    const exact = message('y'.repeat(500_000))
    expect(await prepareRecordForWrite(exact, store)).toBe(exact)
  })

  it('§12.72 a high surrogate at index 499,952 is dropped: 499,999 units, no lone surrogate', async () => {
    const s = 'a'.repeat(499_952) + '\uD83D\uDE00' + 'b'.repeat(200_000)
    expect(s.charCodeAt(499_952)).toBe(0xd83d)
    const stored = await prepareRecordForWrite({ type: 'custom', id: 'c', data: { s } }, new FakeBlobStore())
    const out = (stored.data as { s: string }).s
    expect(out).toHaveLength(499_999)
    expect(out).toBe('a'.repeat(499_952) + TRUNCATION_NOTICE)
    expect(LONE_SURROGATE.test(out)).toBe(false)
  })

  it('§12.73 a 600,000-unit thinkingSignature is stored whole, as the agents store it (neither cut nor cleared); in-memory values never change', async () => {
    const signature = 's'.repeat(600_000)
    const thinking = 't'.repeat(600_000)
    const record = message([{ type: 'thinking', thinking, thinkingSignature: signature }, { type: 'text', text: 'x'.repeat(600_000) }])
    const stored = await prepareRecordForWrite(record, new FakeBlobStore())
    const content = (stored.message as any).content as Array<Record<string, string>>
    expect(content[0]!.thinkingSignature).toBe(signature)
    // The whole signed block is kept: its thinking text belongs to the signature.
    expect(content[0]!.thinking).toBe(thinking)
    // An unsigned block is cut as usual.
    expect(content[1]!.text).toHaveLength(500_000)
    expect((record.message as any).content[1].text).toHaveLength(600_000)
    // A signature key outside a signed block is not cut either.
    const loose = await prepareRecordForWrite({ type: 'custom', id: 'c', data: { thoughtSignature: signature } }, new FakeBlobStore())
    expect((loose.data as { thoughtSignature: string }).thoughtSignature).toBe(signature)
  })

  it('§12.74 partialJson and jsonlEvents are absent at any depth', async () => {
    const record = message([{ type: 'toolCall', partialJson: '{"a"', arguments: { a: 1 } }], {
      jsonlEvents: [1, 2], details: { deep: [[{ partialJson: 'x', keep: true }]] },
    })
    record.partialJson = 'top'
    const snapshot = structuredClone(record)
    const stored = await prepareRecordForWrite(record, new FakeBlobStore())
    const line = serializeRecord(stored)
    expect(line).not.toMatch(/partialJson|jsonlEvents/)
    expect(JSON.parse(line)).toEqual({
      type: 'message',
      id: 'm1',
      parentId: null,
      timestamp: '2026-03-14T15:04:09.412Z',
      message: { role: 'user', content: [{ type: 'toolCall', arguments: { a: 1 } }], details: { deep: [[{ keep: true }]] } },
    })
    expect(record).toEqual(snapshot)
  })

  it('§12.75 lineCount is recomputed after truncation or after removing a sibling key', async () => {
    const long = 'line\n'.repeat(150_000) // 750,000 units, 150,001 lines
    const truncated = await prepareRecordForWrite(
      { type: 'custom', id: 'c', data: { content: long, lineCount: 150_001 } }, new FakeBlobStore())
    const d = truncated.data as { content: string, lineCount: number }
    expect(d.lineCount).toBe(d.content.split('\n').length)
    expect(d.lineCount).toBeLessThan(150_001)

    const sibling = await prepareRecordForWrite(
      { type: 'custom', id: 'c', data: { content: 'a\nb', lineCount: 99, partialJson: '{' } }, new FakeBlobStore())
    expect(sibling.data).toEqual({ content: 'a\nb', lineCount: 2 })

    const unchanged = { type: 'custom', id: 'c', data: { content: 'a\nb', lineCount: 99 } }
    expect(await prepareRecordForWrite(unchanged, new FakeBlobStore())).toBe(unchanged)
  })

  it('§9.1 a record with nothing to change is returned as is, and numbers/booleans/null are untouched', async () => {
    const record = message([{ type: 'text', text: 'hi' }], { n: 1, b: false, z: null, nested: [[1, 'a']] })
    expect(await prepareRecordForWrite(record, new FakeBlobStore())).toBe(record)
  })

  it('§9.1 unchanged sub-objects are shared, changed ones copied with the same key order', async () => {
    const shared = { big: { a: 1 } }
    const record: FileRecord = { type: 'custom', id: 'c', a: shared, b: { partialJson: 1, z: 1, y: 2 }, c: 3 }
    const stored = await prepareRecordForWrite(record, new FakeBlobStore())
    expect(stored).not.toBe(record)
    expect(stored.a).toBe(shared)
    expect(Object.keys(stored)).toEqual(['type', 'id', 'a', 'b', 'c'])
    expect(Object.keys(stored.b as object)).toEqual(['z', 'y'])
  })

  it('a "__proto__" key from JSON stays a plain own key', async () => {
    const record = JSON.parse('{"type":"custom","id":"c","partialJson":1,"__proto__":{"x":1},"d":2}') as FileRecord
    const stored = await prepareRecordForWrite(record, new FakeBlobStore())
    expect(serializeRecord(stored)).toBe('{"type":"custom","id":"c","__proto__":{"x":1},"d":2}\n')
    expect(Object.getPrototypeOf(stored)).toBe(Object.prototype)
  })
})

describe('blob externalization (§9.3)', () => {
  it('§12.76 an image with 1,024 base64 characters becomes blob:sha256:<sha256 of decoded bytes>, stored first', async () => {
    const store = new FakeBlobStore()
    const data = imageData(768) // 1,024 characters
    expect(data).toHaveLength(1024)
    const record = message([{ type: 'text', text: 'see' }, image(data)])
    const stored = await prepareRecordForWrite(record, store)
    const block = (stored.message as any).content[1]
    expect(block).toEqual({ type: 'image', data: `blob:sha256:${sha(data)}`, mimeType: 'image/png' })
    expect(isBlobRef(block.data)).toBe(true)
    // put was awaited: the bytes are in the store when the prepared record is handed back.
    expect(store.blobs.get(sha(data))).toEqual(Buffer.from(data, 'base64'))
    expect((record.message as any).content[1].data).toBe(data)
    expect((stored.message as any).content[0]).toBe((record.message as any).content[0])
  })

  it('§12.76 an image with 1,023 characters stays inline', async () => {
    const store = new FakeBlobStore()
    const data = imageData(768).slice(0, 1023)
    const record = message([image(data)])
    expect(await prepareRecordForWrite(record, store)).toBe(record)
    expect(store.calls).toEqual([])
  })

  it('§12.77 an image inside details.x.content is stored as a ref and, as the agents read it, resolved after reload', async () => {
    const store = new FakeBlobStore()
    const data = imageData(1500)
    const record: FileRecord = {
      type: 'custom_message',
      id: 'cm',
      parentId: null,
      timestamp: 't',
      customType: 'x',
      content: 'c',
      display: true,
      details: { x: { content: [image(data)] } },
    }
    const stored = await prepareRecordForWrite(record, store)
    const ref = `blob:sha256:${sha(data)}`
    expect((stored.details as any).x.content[0].data).toBe(ref)
    const reloaded = JSON.parse(serializeRecord(stored)) as FileRecord
    await resolveBlobRefs([reloaded], store, () => {})
    expect((reloaded.details as any).x.content[0].data).toBe(data)
  })

  it('§9.3 arrays nested directly in a content array count; images elsewhere are plain strings', async () => {
    const store = new FakeBlobStore()
    const data = imageData(900)
    const record = message([[image(data)]], { images: [image(data)], content2: [image(data)], details: { content: image(data) } })
    const stored = await prepareRecordForWrite(record, store)
    const m = stored.message as any
    expect(m.content[0][0].data).toBe(`blob:sha256:${sha(data)}`)
    expect(m.images[0].data).toBe(data)
    expect(m.content2[0].data).toBe(data)
    expect(m.details.content.data).toBe(data)
  })

  it('§9.3 the same image twice in one record is put once; a huge image is not truncated first', async () => {
    const store = new FakeBlobStore()
    const data = imageData(450_000) // 600,000 characters
    const stored = await prepareRecordForWrite(message([image(data), image(data)]), store)
    expect(store.calls).toEqual(['put'])
    expect((stored.message as any).content.map((b: any) => b.data)).toEqual([`blob:sha256:${sha(data)}`, `blob:sha256:${sha(data)}`])
    expect(store.blobs.get(sha(data))!.length).toBe(450_000)
  })

  it('§9.3 a custom_message content array is externalized too, and nested tool result content', async () => {
    const store = new FakeBlobStore()
    const data = imageData(800)
    const cm: FileRecord = { type: 'custom_message', id: 'c', content: [image(data)] }
    expect(((await prepareRecordForWrite(cm, store)).content as any)[0].data).toMatch(BLOB_REF_RE)
    const nested = message([{ type: 'toolResult', content: [image(data)] }])
    expect(((await prepareRecordForWrite(nested, store)).message as any).content[0].content[0].data).toMatch(BLOB_REF_RE)
  })

  it('§9.2 a changed image below recomputes lineCount of an ancestor with string content', async () => {
    const data = imageData(800)
    const record: FileRecord = { type: 'custom', id: 'c', data: { content: 'a\nb\nc', lineCount: 1, extra: { content: [image(data)] } } }
    const stored = await prepareRecordForWrite(record, new FakeBlobStore())
    expect((stored.data as any).lineCount).toBe(3)
  })
})

describe('blob ref resolution (§9.5)', () => {
  it('§12.78 message and custom_message refs are restored to their base64 data', async () => {
    const store = new FakeBlobStore()
    const data = imageData(900)
    const records = [
      message([image(data)]),
      { type: 'custom_message', id: 'c', parentId: 'm1', timestamp: 't', content: [{ type: 'text', text: 'x' }, image(data)] },
    ]
    const stored = await Promise.all(records.map((r) => prepareRecordForWrite(r, store)))
    const reloaded = stored.map((r) => JSON.parse(serializeRecord(r)) as FileRecord)
    expect((reloaded[0]!.message as any).content[0].data).toMatch(BLOB_REF_RE)
    const warnings: string[] = []
    await resolveBlobRefs(reloaded, store, (h) => warnings.push(h))
    expect(reloaded).toEqual(records)
    expect(warnings).toEqual([])
  })

  it('§9.5 non-canonical base64 comes back as the canonical encoding of the decoded bytes', async () => {
    const store = new FakeBlobStore()
    const canonical = imageData(900)
    const messy = canonical.slice(0, 600) + '\n' + canonical.slice(600)
    const stored = await prepareRecordForWrite(message([image(messy)]), store)
    const reloaded = JSON.parse(serializeRecord(stored)) as FileRecord
    await resolveBlobRefs([reloaded], store, () => {})
    expect((reloaded.message as any).content[0].data).toBe(canonical)
  })

  it('§12.79 a missing blob leaves the ref in place and warns with the hash', async () => {
    const hash = 'a'.repeat(64)
    const record = message([image(`blob:sha256:${hash}`)])
    const warnings: string[] = []
    await resolveBlobRefs([record], new FakeBlobStore(), (h) => warnings.push(h))
    expect((record.message as any).content[0].data).toBe(`blob:sha256:${hash}`)
    expect(warnings).toEqual([hash])
  })

  it('§12.80 blob:sha256:../../etc/passwd and upper-case-hex refs are left untouched with no store access', async () => {
    const store = new FakeBlobStore()
    const bad = ['blob:sha256:../../etc/passwd', `blob:sha256:${'A'.repeat(64)}`, `blob:sha256:${'a'.repeat(63)}`]
    const records = [message(bad.map(image)), { type: 'custom_message', id: 'c', content: bad.map(image) }]
    const snapshot = structuredClone(records)
    const warnings: string[] = []
    await resolveBlobRefs(records, store, (h) => warnings.push(h))
    expect(records).toEqual(snapshot)
    expect(store.calls).toEqual([])
    expect(warnings).toEqual([])
    for (const s of bad) expect(isBlobRef(s)).toBe(false)
  })

  it('§9.5 refs are resolved wherever the agents resolve them; never in opaque records or other positions', async () => {
    const store = new FakeBlobStore()
    const bytes = Buffer.from('png bytes')
    const { ref } = await store.put(bytes)
    const url = 'data:image/png;base64,AAAA'
    const urlRef = (await store.put(Buffer.from(url, 'utf8'))).ref
    const records: FileRecord[] = [
      message([{ type: 'toolResult', content: [image(ref)] }], { details: { content: [image(ref)] }, images: [{ data: ref, mimeType: 'image/png' }] }),
      { type: 'custom', id: 'x', content: [image(ref)] },
      message([{ type: 'input_image', image_url: urlRef }, { type: 'image_generation_call', result: ref }]),
    ]
    await resolveBlobRefs(records, store, () => {})
    const base64 = bytes.toString('base64')
    const m0 = records[0]!.message as any
    expect(m0.content[0].content[0].data).toBe(base64)
    expect(m0.details.content[0].data).toBe(base64)
    expect(m0.images[0].data).toBe(base64)
    expect((records[1]!.content as any)[0].data).toBe(base64)
    const m2 = records[2]!.message as any
    expect(m2.content[0].image_url).toBe(url)
    expect(m2.content[1].result).toBe(base64)

    const untouched: FileRecord[] = [
      { type: 'message', message: { role: 'user', content: [image(ref)] } }, // no id: opaque
      message([{ type: 'text', text: ref }], { details: { data: ref, frames: [{ data: ref, mimeType: 'image/png' }] } }),
    ]
    const snapshot = structuredClone(untouched)
    await resolveBlobRefs(untouched, store, () => {})
    expect(untouched).toEqual(snapshot)
  })
})

describe('serializeRecord', () => {
  it('§3.1 one compact JSON line ending in LF; undefined keys omitted; lone surrogates escaped', () => {
    expect(serializeRecord({ a: 1, b: undefined, c: 'x\uD800' })).toBe('{"a":1,"c":"x\\ud800"}\n')
  })
})
