/**
 * Generated and mutated HTTP requests for the API fuzz: a valid request for a random route of
 * API.md (built from what the run has seen so far: session ids, entry ids, etags, blob hashes),
 * then, half of the time, one to three mutations (path segments, query, body, content type,
 * headers, method). Everything random comes from one seeded `Rng` plus value pools that
 * fast-check fills from the same seed, so a run repeats from its seed.
 */
import { createHash } from 'node:crypto'
import {
  bigBody, CONTENT_TYPES, CWDS, decodeSafe, deepBody, ENTRY_TYPES, MUTATIONS, ODD_QUERIES, PROTO_BODIES, TERMINALS,
  TRAVERSALS, truncate, type Pools,
} from './fuzz-values.js'
import type { Rng } from './prng.js'

export interface FuzzState {
  sessions: string[]
  entries: Map<string, string[]>
  etags: Map<string, string>
  blobs: string[]
}

export interface FuzzRequest {
  method: string
  /** The raw request target (already percent-encoded where it should be). */
  path: string
  headers: Record<string, string>
  body?: string | Buffer
  /** The route kind and the mutations applied, for reports. */
  note: string
}

export class RequestMaker {
  readonly #rng: Rng
  readonly #pools: Pools
  readonly #state: FuzzState
  readonly #marker: string
  readonly #mutations: readonly string[]

  /** `skip` leaves out mutation kinds (to look past a known failure). */
  constructor (rng: Rng, pools: Pools, state: FuzzState, marker: string, skip: readonly string[] = []) {
    this.#rng = rng
    this.#pools = pools
    this.#state = state
    this.#marker = marker
    this.#mutations = MUTATIONS.filter((m) => !skip.includes(m))
  }

  /** One request: a valid one for a random route, mutated half of the time. */
  next (): FuzzRequest {
    const req = this.#valid()
    if (this.#rng.chance(0.5)) {
      for (let i = this.#rng.int(1, 3); i > 0; i--) this.#mutate(req)
    }
    return req
  }

  #valid (): FuzzRequest {
    const r = this.#rng
    const sid = this.#sessionSeg()
    const s = `/v1/sessions/${sid}`
    const json = (method: string, path: string, body: unknown, note: string): FuzzRequest =>
      ({ method, path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), note })
    const get = (path: string, note: string): FuzzRequest => ({ method: 'GET', path, headers: {}, note })
    const route = r.int(0, 99)
    if (route < 20) return json('POST', `${s}/entries${this.#blobsQuery()}`, this.#appendBody(sid), 'append')
    if (route < 28) return json('POST', '/v1/sessions', this.#createBody(), 'create')
    if (route < 33) return get(`${s}/entries?after=${r.int(0, 20)}&limit=${r.int(1, 1000)}${this.#blobsQuery('&')}`, 'page')
    if (route < 37) return get(`${s}/entries/${this.#entrySeg(sid)}`, 'entry')
    if (route < 41) return get(`${s}/${r.pick(['tree', 'context', 'branch', 'export', ''])}${this.#leafQuery(sid)}`, 'read')
    if (route < 45) return json('PUT', `${s}/leaf`, { leafId: this.#entryOrNull(sid) }, 'leaf')
    if (route < 48) return json('POST', `${s}/branch-summary`, { fromId: this.#entryOrNull(sid), summary: this.#text() }, 'branch-summary')
    if (route < 51) return json('PATCH', s, { title: this.#text() }, 'rename')
    if (route < 53) return json('POST', `${s}/move`, { cwd: this.#cwd() }, 'move')
    if (route < 56) return json('POST', `${s}/fork`, r.chance(0.5) ? {} : { leafId: this.#entryId(sid) }, 'fork')
    if (route < 57) return { method: 'DELETE', path: s, headers: {}, note: 'delete' }
    if (route < 62) return this.#importRequest()
    if (route < 66) return get(`/v1/sessions?${this.#listQuery()}`, 'list')
    if (route < 68) return get(`/v1/sessions/recent?cwd=${encodeURIComponent(this.#cwd())}&limit=${r.int(1, 10)}`, 'recent')
    if (route < 71) return json('POST', '/v1/sessions/continue', this.#continueBody(), 'continue')
    if (route < 77) return this.#blobRequest()
    if (route < 80) return this.#streamRequest(s)
    if (route < 81) return get('/v1/events', 'sse-global')
    if (route < 84) return get(r.pick(['/healthz', '/readyz', '/openapi.json', '/docs', '/', '/v1', '/v2/sessions']), 'misc')
    const method = r.pick(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'])
    return { method, path: `/v1/${this.#encoded()}/${this.#sessionSeg()}`, headers: {}, note: 'random-route' }
  }

  #importRequest (): FuzzRequest {
    const r = this.#rng
    const type = r.pick(['application/x-ndjson', 'application/jsonl', 'text/plain'])
    const path = `/v1/sessions/import${r.chance(0.3) ? '?newId=true' : ''}`
    return { method: 'POST', path, headers: { 'content-type': type }, body: this.#importBody(), note: 'import' }
  }

  #streamRequest (session: string): FuzzRequest {
    const r = this.#rng
    const headers: Record<string, string> = r.chance(0.5) ? { 'last-event-id': String(r.int(-2, 30)) } : {}
    return { method: 'GET', path: `${session}/events${r.chance(0.3) ? `?after=${r.int(0, 5)}` : ''}`, headers, note: 'sse' }
  }

  #listQuery (): string {
    const r = this.#rng
    const cwd = r.chance(0.5) ? `cwd=${encodeURIComponent(this.#cwd())}&` : ''
    const cursor = r.chance(0.2) ? `&cursor=${this.#encoded()}` : ''
    return `${cwd}limit=${r.int(1, 1000)}&includeEmpty=${r.chance(0.5)}${cursor}`
  }

  #continueBody (): Record<string, unknown> {
    const r = this.#rng
    return r.chance(0.5) ? { cwd: this.#cwd() } : { cwd: this.#cwd(), terminalId: this.#swap(r.pick(TERMINALS)) }
  }

  #leafQuery (sid: string): string { return this.#rng.chance(0.3) ? `?leafId=${this.#entrySeg(sid)}` : '' }
  #entryOrNull (sid: string): string | null { return this.#rng.chance(0.2) ? null : this.#entryId(sid) }

  #blobRequest (): FuzzRequest {
    const r = this.#rng
    const bytes = Buffer.from(this.#text() + r.int(0, 1e9), 'utf8')
    const hash = createHash('sha256').update(bytes).digest('hex')
    const hex = r.chance(0.6) ? hash : r.chance(0.5) ? this.#blobSeg() : this.#weird()
    const type = { 'content-type': r.pick(['application/octet-stream', 'image/png', 'application/json', 'text/plain']) }
    switch (r.int(0, 3)) {
      case 0: return { method: 'PUT', path: `/v1/blobs/sha256/${hex}`, headers: type, body: bytes, note: 'blob-put' }
      case 1: return { method: 'POST', path: '/v1/blobs', headers: type, body: bytes, note: 'blob-post' }
      default: {
        const headers: Record<string, string> = r.chance(0.2) ? { 'if-none-match': `"${this.#blobSeg()}"` } : {}
        return { method: r.pick(['GET', 'HEAD']), path: `/v1/blobs/sha256/${this.#blobSeg()}`, headers, note: 'blob-get' }
      }
    }
  }

  #mutate (req: FuzzRequest): void {
    const r = this.#rng
    const kind = r.pick(this.#mutations)
    req.note += ` +${kind}`
    const parts = req.path.split('?')
    switch (kind) {
      case 'segment': {
        const segs = (parts[0] ?? '').split('/')
        if (segs.length > 2) segs[r.int(2, segs.length - 1)] = this.#weird()
        req.path = segs.join('/') + (parts[1] === undefined ? '' : `?${parts[1]}`)
        break
      }
      case 'query': req.path += (parts.length > 1 ? '&' : '?') + this.#oddQuery(); break
      case 'body-json': req.body = JSON.stringify(r.pick(this.#pools.json)); break
      case 'body-field': req.body = this.#fieldMutation(req.body); break
      case 'body-trunc': if (req.body !== undefined) req.body = truncate(req.body, r.int(0, req.body.length)); break
      case 'body-bytes': req.body = Buffer.from(Array.from({ length: r.int(0, 300) }, () => r.int(0, 255))); break
      case 'content-type': req.headers['content-type'] = r.pick(CONTENT_TYPES); break
      case 'header': this.#header(req); break
      case 'method': req.method = r.pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']); break
      case 'deep': req.body = deepBody(r.int(100, 20000), r.chance(0.7), r.chance(0.5)); break
      case 'big': req.body = bigBody(r.chance(0.5)); break
      case 'proto': req.body = r.pick(PROTO_BODIES); break
    }
  }

  #oddQuery (): string {
    const r = this.#rng
    if (r.chance(0.7)) return r.pick(ODD_QUERIES)
    return r.pick([`cursor=${this.#encoded()}`, `cwd=${encodeURIComponent(this.#cwd())}`, `leafId=${this.#encoded()}`, `x=${this.#encoded()}`])
  }

  #fieldMutation (body: FuzzRequest['body']): string {
    let value: unknown
    try {
      value = JSON.parse(String(body ?? '{}'))
      JSON.stringify(value) // too deep to re-serialize: mutate an empty object instead
    } catch {
      value = {}
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return JSON.stringify(value)
    const obj = value as Record<string, unknown>
    const keys = Object.keys(obj)
    const known = keys.length > 0 && this.#rng.chance(0.7)
    const key = known ? this.#rng.pick(keys) : this.#rng.pick(['id', 'parentId', 'timestamp', 'type', 'extra', 'entries'])
    if (this.#rng.chance(0.3)) delete obj[key]
    else obj[key] = this.#rng.pick(this.#pools.json)
    return JSON.stringify(obj)
  }

  #header (req: FuzzRequest): void {
    const r = this.#rng
    const sid = this.#state.sessions.length > 0 ? r.pick(this.#state.sessions) : ''
    const printable = (): string => this.#text().replace(/[^\x20-\x7e]/g, '')
    switch (r.int(0, 4)) {
      case 0: req.headers['if-match'] = r.pick([this.#state.etags.get(sid) ?? '"x"', '*', 'W/"x"', '"stale"', printable(), '"a", "b"', 'x'.repeat(5000)])
        break
      case 1: req.headers['idempotency-key'] = r.pick([printable(), 'k1', 'k2', 'x'.repeat(256), 'x'.repeat(255), ' ']); break
      case 2: req.headers['last-event-id'] = r.pick(['-1', 'abc', '1e9', '99999999999999999999', '', '3', printable()]); break
      case 3: req.headers.accept = r.pick(['text/event-stream', 'application/xml', '*/*', printable()]); break
      default: req.headers[r.pick(['x-request-id', 'forwarded', 'range', 'cookie'])] = printable(); break
    }
  }

  #appendBody (sid: string): unknown {
    const r = this.#rng
    const n = r.chance(0.6) ? 1 : r.int(2, 6)
    const entries = Array.from({ length: n }, () => this.#newEntry(sid))
    if (n === 1 && r.chance(0.5)) return entries[0]
    const body: Record<string, unknown> = { entries }
    if (r.chance(0.3)) body.parentId = r.chance(0.3) ? null : this.#entryId(sid)
    return body
  }

  #newEntry (sid: string): Record<string, unknown> {
    const r = this.#rng
    const type = r.chance(0.8) ? r.pick(ENTRY_TYPES.slice(0, 11)) : r.pick(ENTRY_TYPES)
    const text = this.#text()
    switch (type) {
      case 'message': return {
        type,
        message: r.chance(0.5)
          ? { role: 'user', content: text, timestamp: Date.now() }
          : { role: 'assistant', content: [{ type: 'text', text }, ...(r.chance(0.3) ? [this.#image()] : [])], provider: 'p', model: 'm' }
      }
      case 'custom': return { type, customType: 'fuzz', data: r.pick(this.#pools.json) }
      case 'custom_message': return { type, customType: 'fuzz', content: r.chance(0.5) ? text : [this.#image()], display: r.chance(0.5) }
      case 'label': return { type, targetId: this.#entryId(sid), label: text }
      case 'model_change': return { type, model: text || 'm' }
      case 'thinking_level_change': return { type, thinkingLevel: r.chance(0.5) ? 'high' : null }
      case 'compaction': return { type, summary: text, tokensBefore: r.int(0, 1e6), firstKeptEntryId: this.#entryId(sid) }
      case 'branch_summary': return { type, fromId: this.#entryId(sid), summary: text }
      case 'ttsr_injection': return { type, injectedRules: [text] }
      case 'session_init': return { type, systemPrompt: text, task: 't', tools: ['a'] }
      case 'mode_change': return { type, mode: 'plan', data: { k: r.pick(this.#pools.json) } }
      default: return { type, id: 'mine', parentId: 'x', timestamp: 'now', cwd: this.#cwd() }
    }
  }

  #image (): Record<string, unknown> {
    const r = this.#rng
    const data = r.pick([
      Buffer.from(Array.from({ length: r.int(700, 1500) }, () => r.int(0, 255))).toString('base64'),
      `blob:sha256:${this.#blobSeg()}`, 'blob:sha256:../../@M', '!!not base64!!'.repeat(100),
    ]).replace('@M', this.#marker)
    return { type: 'image', data, mimeType: r.pick(['image/png', 'image/jpeg', '../x']) }
  }

  #createBody (): Record<string, unknown> {
    const r = this.#rng
    const body: Record<string, unknown> = { cwd: this.#cwd() }
    if (r.chance(0.3)) body.title = this.#text()
    if (r.chance(0.2)) body.parentSession = r.pick([this.#swap('../../@M'), this.#sessionSeg(), this.#text()])
    if (r.chance(0.3)) body.id = r.pick([this.#uuid(), this.#swap(r.pick(TRAVERSALS)), `c-${r.int(0, 50)}`, this.#text()])
    return body
  }

  #importBody (): string {
    const r = this.#rng
    const id = r.pick([this.#uuid(), this.#swap('../../@M'), this.#sessionSeg(), '', `imp-${r.int(0, 30)}`])
    const header = { type: 'session', version: r.pick([1, 2, 3, 3, 3, 4, '3', null]), id, timestamp: new Date().toISOString(), cwd: this.#cwd() }
    const lines = [JSON.stringify(header)]
    let parent: string | null = null
    for (let i = r.int(0, 8); i > 0; i--) {
      const entryId = r.chance(0.9) ? `e${r.int(0, 10)}` : this.#swap('../@M')
      const entry = { ...this.#newEntry(''), id: entryId, parentId: parent, timestamp: new Date().toISOString() }
      lines.push(r.chance(0.1) ? this.#text() : JSON.stringify(entry))
      parent = r.chance(0.8) ? entryId : this.#text()
    }
    return lines.join(r.chance(0.1) ? '\r\n' : '\n') + (r.chance(0.8) ? '\n' : '')
  }

  #sessionSeg (): string {
    const r = this.#rng
    if (this.#state.sessions.length > 0 && r.chance(0.7)) return encodeURIComponent(r.pick(this.#state.sessions))
    return r.chance(0.6) ? this.#weird() : encodeURIComponent(this.#uuid())
  }

  #entryId (sid: string): string {
    const known = this.#state.entries.get(decodeSafe(sid)) ?? []
    return known.length > 0 && this.#rng.chance(0.8) ? this.#rng.pick(known) : this.#rng.pick(['deadbeef', this.#text(), this.#swap('../@M')])
  }

  #entrySeg (sid: string): string { return this.#rng.chance(0.8) ? encodeURIComponent(this.#entryId(sid)) : this.#weird() }
  #blobSeg (): string {
    const r = this.#rng
    if (this.#state.blobs.length > 0 && r.chance(0.6)) return r.pick(this.#state.blobs)
    return r.pick(['0'.repeat(64), 'A'.repeat(64), 'f'.repeat(63), this.#weird(), createHash('sha256').update(String(r.next())).digest('hex')])
  }

  /** A UUIDv7-shaped id from the seeded generator. */
  #uuid (): string {
    const hex = Array.from({ length: 32 }, () => this.#rng.int(0, 15).toString(16)).join('')
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7${hex.slice(13, 16)}-${'89ab'[this.#rng.int(0, 3)]}${hex.slice(17, 20)}-${hex.slice(20)}`
  }

  #blobsQuery (sep = '?'): string { return this.#rng.chance(0.2) ? `${sep}blobs=${this.#rng.pick(['ref', 'inline', 'zzz'])}` : '' }
  #cwd (): string { return this.#swap(this.#rng.chance(0.6) ? this.#rng.pick(CWDS.slice(0, 2)) : this.#rng.pick(CWDS)) }
  #text (): string { return this.#rng.pick(this.#pools.text) }
  #weird (): string { return this.#swap(this.#rng.pick(TRAVERSALS)) }
  #encoded (): string { return this.#rng.chance(0.5) ? this.#weird() : encodeURIComponent(this.#text()) }
  #swap (s: string): string { return s.replaceAll('@M', this.#marker) }
}
