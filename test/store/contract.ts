/**
 * The contract of the session store seam (src/storage/store.ts), one suite run against every
 * store: disk and memory (jsonl-store.test.ts) and PostgreSQL (pg-store.test.ts). Each store's
 * own cases (its index, its files, several processes) follow in its own file.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Journal, ListingItem, NewSession, SessionStore, StoredLine } from '../../src/storage/store.js'
import { searchContract } from './search-contract.js'

export interface StoreFixture {
  store: SessionStore
  close: () => Promise<void>
}

const T = 'acme'

export function header (id: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ type: 'session', version: 3, id, timestamp: '2026-03-14T15:04:07.123Z', cwd: '/w', ...extra })
}

export function userLine (id: string, text: string, parentId: string | null = null): string {
  return JSON.stringify({ type: 'message', id, parentId, timestamp: '2026-03-14T15:04:08.000Z', message: { role: 'user', content: text } })
}

export function item (id: string, over: Partial<ListingItem> = {}): ListingItem {
  return { id, cwd: '/w', created: '2026-03-14T15:04:07.123Z', modifiedMs: Date.now(), messageCount: 0, firstMessage: '(no messages)', entryCount: 0, ...over }
}

export const lines = (...texts: string[]): StoredLine[] => texts.map((line) => ({ id: null, line }))

export function session (id: string, body: string[] = [], over: Partial<NewSession> = {}, info: Partial<ListingItem> = {}): NewSession {
  return { id, lines: lines(header(id, info.cwd === undefined ? {} : { cwd: info.cwd }), ...body), saved: true, info: item(id, { messageCount: body.length, ...info }), ...over }
}

/** The whole stored text of a saved session, or `undefined`. */
export async function textOf (store: SessionStore, id: string, tenant = T): Promise<string | undefined> {
  const stored = await store.read(tenant, id)
  if (stored === undefined) return undefined
  let text = ''
  for await (const chunk of stored.text) text += chunk
  expect(Buffer.byteLength(text, 'utf8')).toBe(stored.size)
  return text
}

/** Loads a session and reads its text whole; the journal is open from there on. */
export async function loaded (store: SessionStore, id: string): Promise<{ text: string, journal: Journal } | undefined> {
  const l = await store.load(T, id)
  if (l === undefined) return undefined
  let text = ''
  for await (const chunk of l.text) text += chunk
  return { text, journal: l.journal }
}

export function storeContract (name: string, open: () => Promise<StoreFixture>): void {
  describe(`${name} store contract`, () => {
    let fx: StoreFixture
    let s: SessionStore
    const journals: Journal[] = []
    const create = async (n: NewSession, tenant = T): Promise<Journal> => {
      const j = await s.create(tenant, n)
      journals.push(j)
      return j
    }
    beforeEach(async () => { fx = await open(); s = fx.store })
    afterEach(async () => {
      for (const j of journals.splice(0)) await j.close()
      await fx.close()
    })

    it('knows no session it was not given: load, read and info are undefined', async () => {
      expect(await s.load(T, 'nope')).toBeUndefined()
      expect(await s.read(T, 'nope')).toBeUndefined()
      expect(await s.info(T, 'nope')).toBeUndefined()
      expect(await s.load(T, 'bad\u0000id')).toBeUndefined()
      expect(await s.writable()).toBe(true)
    })

    it('closes once however often it is closed', async () => {
      await create(session('closing', [userLine('e1', 'hi')]))
      await s.close()
      await expect(s.close()).resolves.toBeUndefined()
    })

    it('keeps a saved session\'s text byte for byte, and loads it with a journal at its version', async () => {
      const body = [userLine('a1', 'héllo 😀 "q"'), '{"type":"custom","id":"x","parentId":"a1","timestamp":"t","data":{"b":1,"a":2}}', '{"odd": 1.0}']
      const j = await create(session('s1', body))
      expect(j.saved).toBe(true)
      const want = [header('s1'), ...body].join('\n') + '\n'
      expect(await textOf(s, 's1')).toBe(want)
      const version = j.version
      await j.close() // one journal per session and process: the next is the load's
      const l = await loaded(s, 's1')
      journals.push(...(l === undefined ? [] : [l.journal]))
      expect(l?.text).toBe(want)
      expect(l?.journal.version).toBe(version)
      expect(await s.info(T, 's1')).toMatchObject({ id: 's1', messageCount: 3 })
    })

    it('refuses a second session of one id in a tenant, saved or not; another tenant may have it', async () => {
      await create(session('dup', [], { saved: false }))
      await expect(s.create(T, session('dup'))).rejects.toMatchObject({ code: 'SS_SESSION_EXISTS' })
      await create(session('dup'), 'other')
      expect(await textOf(s, 'dup', 'other')).toBe(header('dup') + '\n')
      expect(await textOf(s, 'dup')).toBeUndefined() // unsaved: no text to read
    })

    it('appends at the journal\'s version, each append durable and in order; the version grows', async () => {
      const j = await create(session('ap'))
      const before = j.version
      for (let i = 0; i < 3; i++) {
        expect(await j.append({ lines: lines(userLine(`e${i}`, `m${i}`)), save: true, info: item('ap', { messageCount: i + 1 }), answers: [] })).toEqual({ ok: true })
      }
      expect(j.version).toBeGreaterThan(before)
      expect(await textOf(s, 'ap')).toBe([header('ap'), userLine('e0', 'm0'), userLine('e1', 'm1'), userLine('e2', 'm2')].join('\n') + '\n')
      expect(await j.refresh()).toBeUndefined()
    })

    it('holds an unsaved session until an append saves it, then stores every line of it', async () => {
      const j = await create(session('u', [], { saved: false }))
      expect(j.saved).toBe(false)
      await j.append({ lines: lines(userLine('q', 'question')), save: false, info: item('u', { messageCount: 1 }), answers: [] })
      expect(await textOf(s, 'u')).toBeUndefined()
      expect((await s.list(T, { includeEmpty: false, limit: 10 })).items.map((i) => i.id)).toEqual(['u'])
      expect(await s.continueTarget(T, '/w')).toBeUndefined()
      await j.append({ lines: lines(userLine('a', 'answer', 'q')), save: true, info: item('u', { messageCount: 2 }), answers: [] })
      expect(j.saved).toBe(true)
      expect(await textOf(s, 'u')).toBe([header('u'), userLine('q', 'question'), userLine('a', 'answer', 'q')].join('\n') + '\n')
      expect(await s.continueTarget(T, '/w')).toBe('u')
    })

    it('starts an append after a torn last line on a line of its own, as a file append does', async () => {
      const j = await create({ ...session('torn', ['{"type":"message","id":"a"}', '{"type":"mess']), torn: true })
      expect(await textOf(s, 'torn')).toBe(`${header('torn')}\n{"type":"message","id":"a"}\n{"type":"mess`)
      await j.append({ lines: lines(userLine('b', 'after')), save: true, info: item('torn'), answers: [] })
      expect(await textOf(s, 'torn')).toBe(`${header('torn')}\n{"type":"message","id":"a"}\n{"type":"mess\n${userLine('b', 'after')}\n`)
    })

    it('rewrites the header alone, keeping every later line byte for byte and an agent\'s title line out', async () => {
      const slot = '{"type":"title","v":1,"title":"Old","updatedAt":"2026-01-01T00:00:00.000Z","pad":"   "}'
      const body = ['{"type":"message", "id":"a1",  "spaced":true}', userLine('a2', 'kept')]
      const j = await create({ ...session('h', body), lines: lines(slot, header('h'), ...body) })
      const renamed = header('h', { title: 'New' })
      expect(await j.rewriteHeader(renamed, item('h', { title: 'New' }))).toEqual({ ok: true })
      expect(await textOf(s, 'h')).toBe([renamed, ...body].join('\n') + '\n')
      expect(await s.info(T, 'h')).toMatchObject({ title: 'New' })
      expect((await s.recent(T, '/w', 5)).map((r) => r.name)).toEqual(['New'])
    })

    it('moves a session to another cwd with its header, listed there and no longer here', async () => {
      const j = await create(session('mv', [userLine('a', 'hi')]))
      const moved = header('mv', { cwd: '/a:b' })
      expect(await j.rewriteHeader(moved, item('mv', { cwd: '/a:b', messageCount: 1 }))).toEqual({ ok: true })
      expect((await s.list(T, { cwd: '/a:b', includeEmpty: true, limit: 10 })).items.map((i) => i.id)).toEqual(['mv'])
      expect((await s.list(T, { cwd: '/w', includeEmpty: true, limit: 10 })).items).toEqual([])
      expect(await textOf(s, 'mv')).toBe(`${moved}\n${userLine('a', 'hi')}\n`)
      // Two cwds that share a directory name are still two cwds.
      await create(session('other', [], {}, { cwd: '/a/b' }))
      expect((await s.list(T, { cwd: '/a/b', includeEmpty: true, limit: 10 })).items.map((i) => i.id)).toEqual(['other'])
      expect(await j.rewriteHeader(header('mv', { cwd: '/a/b' }), item('mv', { cwd: '/a/b' }))).toEqual({ ok: true })
      expect((await s.list(T, { cwd: '/a/b', includeEmpty: true, limit: 10 })).items.map((i) => i.id).sort()).toEqual(['mv', 'other'])
    })

    it('replaces a whole session', async () => {
      const j = await create(session('r', [userLine('old', 'old')]))
      expect(await j.replace(lines(header('r', { version: 3 }), userLine('new', 'new')), item('r', { messageCount: 1 }))).toEqual({ ok: true })
      expect(await textOf(s, 'r')).toBe(`${header('r', { version: 3 })}\n${userLine('new', 'new')}\n`)
    })

    it('removes a session: gone from loads, reads and listings', async () => {
      const j = await create(session('rm', [userLine('a', 'x')]))
      expect(await j.remove()).toEqual({ ok: true })
      expect(await s.read(T, 'rm')).toBeUndefined()
      expect(await s.load(T, 'rm')).toBeUndefined()
      expect((await s.list(T, { includeEmpty: true, limit: 10 })).items).toEqual([])
    })

    it('keeps the answers of idempotent appends with their lines; an append whose key is answered stores nothing', async () => {
      const j = await create(session('k'))
      const answer = { key: 'k1', bodyHash: 'h1', answer: '{"result":1}' }
      expect(await j.append({ lines: lines(userLine('a', 'once')), save: true, info: item('k'), answers: [answer] })).toEqual({ ok: true })
      const again = await j.append({ lines: lines(userLine('b', 'twice')), save: true, info: item('k'), answers: [{ ...answer, answer: '{"result":2}' }] })
      expect(again).toEqual({ ok: false, answered: new Map([['k1', answer]]) })
      expect(await textOf(s, 'k')).toBe(`${header('k')}\n${userLine('a', 'once')}\n`)
    })

    it('lists newest first by keyset pages, hides sessions without messages unless asked, and filters by exact cwd', async () => {
      const base = Date.now()
      for (let i = 0; i < 7; i++) await create(session(`l${i}`, i === 3 ? [] : [userLine('m', 'x')], {}, { modifiedMs: base + (i === 5 ? 2 : i) * 10 }))
      await create(session('tie', [userLine('m', 'x')], {}, { modifiedMs: base + 40 }))
      const ids: string[] = []
      let after
      for (;;) {
        const page = await s.list(T, { includeEmpty: false, limit: 2, after })
        ids.push(...page.items.map((i) => i.id))
        const last = page.items.at(-1)
        if (!page.more || last === undefined) break
        after = { modifiedMs: last.modifiedMs, id: last.id }
      }
      expect(ids).toEqual(['l6', 'l4', 'tie', 'l2', 'l5', 'l1', 'l0'])
      expect((await s.list(T, { includeEmpty: true, limit: 100 })).items).toHaveLength(8)
      expect((await s.list(T, { cwd: '/elsewhere', includeEmpty: true, limit: 100 })).items).toEqual([])
    })

    it('names recent sessions as a prefix read does, and resumes the one a terminal used', async () => {
      await create(session('n1', [userLine('q', 'first words\nsecond line')], {}, { modifiedMs: Date.now() - 1000 }))
      await create(session('n2', [], {}, { modifiedMs: Date.now() }))
      expect((await s.recent(T, '/w', 5)).map((r) => [r.id, r.name])).toEqual([['n2', 'n2'], ['n1', 'first words']])
      expect(await s.continueTarget(T, '/w')).toBe('n2')
      await s.setBreadcrumb(T, 'pts-1', '/w', 'n1')
      expect(await s.continueTarget(T, '/w', 'pts-1')).toBe('n1')
      expect(await s.continueTarget(T, '/w', 'pts-2')).toBe('n2')
      expect(await s.continueTarget(T, '/other', 'pts-1')).toBeUndefined()
      expect(await s.breadcrumbs(T)).toEqual([{ terminalId: 'pts-1', cwd: '/w', id: 'n1' }])
      expect(await s.tenants()).toContain(T)
    })

    it('keeps text a client sent exactly: a cwd with a lone surrogate, a title with NUL', async () => {
      const cwd = '/w/\ud800x'
      const title = 'a\u0000b'
      const n: NewSession = { id: 'exact', lines: lines(JSON.stringify({ type: 'session', version: 3, id: 'exact', timestamp: 't', cwd, title })), saved: true, info: item('exact', { cwd, title }) }
      await create(n)
      expect((await s.list(T, { cwd, includeEmpty: true, limit: 5 })).items).toMatchObject([{ id: 'exact', cwd, title }])
      expect((await s.list(T, { cwd: '/w/\ud801x', includeEmpty: true, limit: 5 })).items).toEqual([])
      expect(JSON.parse((await textOf(s, 'exact'))?.trim() ?? '{}')).toMatchObject({ cwd, title })
    })

    it('refLines answers the marked lines of a tenant\'s sessions, saved and unsaved, headers included', async () => {
      const ref = (c: string): string => `blob:sha256:${c.repeat(64)}`
      const image = (id: string, data: string): string => JSON.stringify({ type: 'message', id, parentId: null, timestamp: 't', message: { role: 'user', content: [{ type: 'image', data, mimeType: 'image/png' }] } })
      const escaped = '{"type":"custom","id":"e1","parentId":null,"timestamp":"t","data":"\\u0062lob"}'
      const titled = header('titled', { title: `about ${ref('c')}` })
      await create(session('saved', [userLine('p', 'plain'), image('r1', ref('a'))]))
      const unsaved = await create(session('unsaved', [escaped], { saved: false }))
      await create({ ...session('titled'), lines: lines(titled) })
      await create(session('other', [image('r9', ref('9'))]), 'globex')
      const marked = async (tenant = T): Promise<string[]> => {
        const found: string[] = []
        for await (const line of s.refLines(tenant)) found.push(line)
        return found.sort()
      }
      expect(await marked()).toEqual([image('r1', ref('a')), escaped, titled].sort())
      await unsaved.append({ lines: lines(image('r2', ref('b'))), save: false, info: item('unsaved'), answers: [] })
      expect(await marked()).toContain(image('r2', ref('b')))
      await unsaved.append({ lines: lines(userLine('q', 'saved now')), save: true, info: item('unsaved'), answers: [] })
      expect(await marked()).toEqual([image('r1', ref('a')), image('r2', ref('b')), escaped, titled].sort())
      expect(await marked('globex')).toEqual([image('r9', ref('9'))])
      expect(await marked('nobody')).toEqual([])
    })

    it('usage counts a tenant\'s sessions, saved and unsaved, and the bytes of their text', async () => {
      expect(await s.usage(T)).toEqual({ sessions: 0, bytes: 0 })
      const j = await create(session('u1', [userLine('a', 'x')]))
      await create(session('u2', [], { saved: false }))
      await create(session('u3'), 'globex')
      const text = (await textOf(s, 'u1')) ?? ''
      const first = await s.usage(T)
      expect(first.sessions).toBe(2)
      expect(first.bytes).toBeGreaterThanOrEqual(Buffer.byteLength(text))
      await j.append({ lines: lines(userLine('b', 'more', 'a')), save: true, info: item('u1'), answers: [] })
      const grown = await s.usage(T)
      expect(grown.bytes - first.bytes).toBe(Buffer.byteLength(userLine('b', 'more', 'a') + '\n'))
      await j.remove()
      expect((await s.usage(T)).sessions).toBe(1)
      expect((await s.usage('globex')).sessions).toBe(1)
    })

    it('runAlone runs one work of a name at a time and answers what it gave', async () => {
      let release = (): void => {}
      const held = s.runAlone('gc:acme', async () => await new Promise<string>((resolve) => { release = () => resolve('first') }))
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(await s.runAlone('gc:acme', async () => 'second')).toEqual({ ran: false })
      expect(await s.runAlone('gc:globex', async () => 'other')).toEqual({ ran: true, value: 'other' })
      release()
      expect(await held).toEqual({ ran: true, value: 'first' })
      expect(await s.runAlone('gc:acme', async () => 'again')).toEqual({ ran: true, value: 'again' })
      await expect(s.runAlone('gc:acme', async () => { throw new Error('boom') })).rejects.toThrow('boom')
      expect(await s.runAlone('gc:acme', async () => 'after a failure')).toEqual({ ran: true, value: 'after a failure' })
    })
    searchContract(() => s, create)
  })
}
