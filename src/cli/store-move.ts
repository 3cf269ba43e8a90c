/**
 * Copies one whole store into another (`session-store migrate --from … --to …`), then proves
 * the copy: every session of every tenant (its text byte for byte), every terminal breadcrumb
 * and every blob. Blobs go first, put (durable on return) one at a time; then sessions, each
 * stored whole in one step (an atomic file write, or one transaction), so an interrupted move
 * leaves no partial session and none whose blobs are missing. Memory holds one session or one
 * blob at a time.
 *
 * The verification reads both sides again after the copy: each session's SHA-256 against its
 * source's, each blob's bytes against its hash on both sides, and the counts.
 */
import { createHash } from 'node:crypto'
import { openBlob } from '../blobs/reader.js'
import { sha256Hex } from '../blobs/hash.js'
import type { BlobStore } from '../blobs/types.js'
import { SessionExists } from '../errors.js'
import type { ListingItem, SessionStore } from '../storage/store.js'
import { CliError, messageOf, type Output } from './args.js'
import { plural, type Reporter } from './progress.js'
import type { Store } from './stores.js'

export interface MoveOptions {
  /** Add to a destination that already holds sessions or blobs (never overwriting a differing session). */
  merge: boolean
  signal: AbortSignal
}

export interface MoveResult {
  tenants: number
  files: number
  fileBytes: number
  blobs: number
  blobBytes: number
  /** Sessions and blobs the destination already held with the same content (with `merge`). */
  alreadyThere: number
  /** One line per session or blob that differs, could not be copied or could not be verified. */
  problems: string[]
  interrupted: boolean
}

interface Plan { tenant: string, sessions: ListingItem[], blobs: string[] }

/** Copies `from` into `to`, then verifies. Problems are collected, not thrown. */
export async function moveStore (from: Store, to: Store, options: MoveOptions, report: Reporter, stderr: Output): Promise<MoveResult> {
  const plans: Plan[] = []
  for (const tenant of await from.sessions.tenants()) {
    plans.push({ tenant, sessions: await allSessions(from.sessions, tenant), blobs: await allHashes(from.blobs(tenant), from.label) })
  }
  if (!options.merge) await refuseNonEmpty(to, plans.map((p) => p.tenant))
  const result: MoveResult = { tenants: plans.length, files: 0, fileBytes: 0, blobs: 0, blobBytes: 0, alreadyThere: 0, problems: [], interrupted: false }
  const files = new Meter('copying sessions', plans.reduce((n, p) => n + p.sessions.length, 0), report, stderr)
  const blobs = new Meter('copying blobs', plans.reduce((n, p) => n + p.blobs.length, 0), report, stderr)
  const stop = (): boolean => (result.interrupted ||= options.signal.aborted)
  // Blobs first: a session never lands before the blobs its lines refer to (SPEC.md §9.4).
  for (const plan of plans) {
    const source = from.blobs(plan.tenant)
    const target = to.blobs(plan.tenant)
    for (const hash of plan.blobs) {
      if (stop()) return result
      await step(result, `${plan.tenant}: blob ${hash}`, async () => {
        const bytes = await copyBlob(source, target, hash, result)
        result.blobs++
        result.blobBytes += bytes
        blobs.add(bytes)
      })
    }
  }
  blobs.end()
  for (const plan of plans) {
    for (const info of plan.sessions) {
      if (stop()) return result
      await step(result, `${plan.tenant}: session ${info.id}`, async () => {
        const bytes = await copySession(from.sessions, to.sessions, plan.tenant, info, result)
        result.files++
        result.fileBytes += bytes
        files.add(bytes)
      })
    }
    for (const crumb of await from.sessions.breadcrumbs(plan.tenant)) {
      await step(result, `${plan.tenant}: breadcrumb ${crumb.terminalId}`, async () => {
        await to.sessions.setBreadcrumb(plan.tenant, crumb.terminalId, crumb.cwd, crumb.id)
      })
    }
  }
  files.end()
  await verify(from, to, plans, options, result, new Meter('verifying', files.total + blobs.total, report, stderr), stop)
  return result
}

/** One line for the summary: what was moved. */
export function describeMove (r: MoveResult): string {
  return `${plural(r.files, 'session')} (${formatBytes(r.fileBytes)}) and ${plural(r.blobs, 'blob')} (${formatBytes(r.blobBytes)}) ` +
    `in ${plural(r.tenants, 'tenant')}${r.alreadyThere > 0 ? `, ${r.alreadyThere} already there` : ''}`
}

async function step (result: MoveResult, what: string, fn: () => Promise<void>): Promise<void> {
  try {
    await fn()
  } catch (err) {
    result.problems.push(`${what}: ${messageOf(err)}`)
  }
}

/** The listing item of every saved session of `tenant`, newest first. */
async function allSessions (store: SessionStore, tenant: string): Promise<ListingItem[]> {
  const items: ListingItem[] = []
  for (let page = await store.list(tenant, { includeEmpty: true, limit: 1000 }); ; page = await store.list(tenant, { includeEmpty: true, limit: 1000, after: items.at(-1) })) {
    items.push(...page.items)
    if (!page.more) return items
  }
}

async function allHashes (blobs: BlobStore, label: string): Promise<string[]> {
  if (blobs.list === undefined) throw new CliError(`${label}: its blob store cannot list its blobs`)
  const hashes: string[] = []
  for await (const hash of blobs.list()) hashes.push(hash)
  return hashes.sort()
}

/** Refuses a destination holding anything, in its own tenants or in those about to be copied. */
async function refuseNonEmpty (to: Store, tenants: string[]): Promise<void> {
  let sessions = 0
  let blobs = 0
  for (const tenant of new Set([...await to.sessions.tenants(), ...tenants])) {
    sessions += (await allSessions(to.sessions, tenant)).length
    blobs += (await allHashes(to.blobs(tenant), to.label)).length
  }
  if (sessions + blobs > 0) {
    throw new CliError(`${to.label} is not empty (${plural(sessions, 'session')}, ${plural(blobs, 'blob')}); ` +
      'pass --merge to add to it (a session that differs is never overwritten)')
  }
}

/** The whole stored text of a saved session, or `undefined`. */
async function textOf (store: SessionStore, tenant: string, id: string): Promise<string | undefined> {
  const stored = await store.read(tenant, id)
  if (stored === undefined) return undefined
  let text = ''
  for await (const chunk of stored.text) text += chunk
  if (Buffer.byteLength(text, 'utf8') !== stored.size) throw new Error('not valid UTF-8, so it cannot be copied byte for byte')
  return text
}

/** Copies one session; resolves with its size. A session the destination has must already be equal. */
async function copySession (from: SessionStore, to: SessionStore, tenant: string, info: ListingItem, result: MoveResult): Promise<number> {
  const text = await textOf(from, tenant, info.id)
  if (text === undefined) throw new Error('gone from the source while it was copied')
  const torn = !text.endsWith('\n')
  const lines = (torn ? text : text.slice(0, -1)).split('\n').map((line) => ({ id: null, line }))
  try {
    const journal = await to.create(tenant, { id: info.id, lines, saved: true, torn, info })
    await journal.close()
  } catch (err) {
    if (!(err instanceof SessionExists)) throw err
    if (await textOf(to, tenant, info.id) !== text) throw new Error('the destination holds a different session of this id (left unchanged)', { cause: err })
    result.alreadyThere++
  }
  return Buffer.byteLength(text, 'utf8')
}

/** Copies one blob; resolves with its size. */
async function copyBlob (from: BlobStore, to: BlobStore, hash: string, result: MoveResult): Promise<number> {
  const bytes = await from.get(hash)
  if (bytes === null) throw new Error('missing from the source while it was copied')
  if (sha256Hex(bytes) !== hash) throw new Error('the source bytes do not match their hash (corrupt source blob, not copied)')
  if (await to.has(hash)) {
    result.alreadyThere++
    return bytes.length
  }
  await to.put(bytes)
  return bytes.length
}

async function verify (from: Store, to: Store, plans: Plan[], options: MoveOptions, result: MoveResult, meter: Meter, stop: () => boolean): Promise<void> {
  for (const plan of plans) {
    for (const info of plan.sessions) {
      if (stop()) return
      await step(result, `verify ${plan.tenant}: session ${info.id}`, async () => {
        const text = await textOf(from.sessions, plan.tenant, info.id) ?? ''
        const want = sha256Hex(Buffer.from(text, 'utf8'))
        const got = sha256Hex(Buffer.from(await textOf(to.sessions, plan.tenant, info.id) ?? '', 'utf8'))
        if (got !== want) throw new Error(`differs after the copy (sha256 ${got}, expected ${want})`)
        meter.add(Buffer.byteLength(text, 'utf8'))
      })
    }
    const source = from.blobs(plan.tenant)
    const target = to.blobs(plan.tenant)
    for (const hash of plan.blobs) {
      if (stop()) return
      await step(result, `verify ${plan.tenant}: blob ${hash}`, async () => {
        let size = 0
        for (const [side, store] of [['source', source], ['destination', target]] as const) {
          const got = await streamedHash(store, hash)
          if (got?.hash !== hash) throw new Error(got === null ? `missing from the ${side}` : `the ${side} bytes hash to ${got.hash}`)
          size = got.size
        }
        meter.add(size)
      })
    }
    await step(result, `verify ${plan.tenant}: counts`, async () => {
      const sessions = (await allSessions(to.sessions, plan.tenant)).length
      const blobs = (await allHashes(target, to.label)).length
      const short = options.merge ? sessions < plan.sessions.length || blobs < plan.blobs.length : sessions !== plan.sessions.length || blobs !== plan.blobs.length
      if (short) throw new Error(`the destination holds ${plural(sessions, 'session')} and ${plural(blobs, 'blob')}, the source ${plan.sessions.length} and ${plan.blobs.length}`)
    })
  }
  meter.end()
}

/** SHA-256 and size of a blob read as a stream, or `null` when absent. */
async function streamedHash (store: BlobStore, hash: string): Promise<{ hash: string, size: number } | null> {
  const reader = await openBlob(store, hash)
  if (reader === null) return null
  const digest = createHash('sha256')
  let size = 0
  for await (const chunk of reader.stream()) {
    digest.update(chunk as Buffer)
    size += (chunk as Buffer).length
  }
  return { hash: digest.digest('hex'), size }
}

export function formatBytes (n: number): string {
  if (n < 1024) return `${n} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let value = n / 1024
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++ }
  return `${value.toFixed(1)} ${units[unit] ?? 'TiB'}`
}

/**
 * Progress of one phase on stderr: the redrawn status line on a terminal, otherwise a line
 * `<phase>: <done>/<total>, <bytes>` at most once a second and when the phase ends.
 */
class Meter {
  done = 0
  bytes = 0
  #last = 0
  constructor (readonly phase: string, readonly total: number, readonly report: Reporter, readonly stderr: Output) {}

  add (bytes: number): void {
    this.done++
    this.bytes += bytes
    const text = `${this.phase}: ${this.done}/${this.total}, ${formatBytes(this.bytes)}`
    if (this.report.interactive) this.report.progress(this.done, this.total, `${this.phase}, ${formatBytes(this.bytes)}`)
    else if (Date.now() - this.#last >= 1000) {
      this.#last = Date.now()
      this.stderr.write(text + '\n')
    }
  }

  end (): void {
    if (this.report.interactive || this.total === 0) return
    this.stderr.write(`${this.phase}: ${this.done}/${this.total}, ${formatBytes(this.bytes)}\n`)
  }
}
