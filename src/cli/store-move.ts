/**
 * Copies one whole store into another (`session-store migrate --from … --to …`), then proves
 * the copy: every session file and breadcrumb of every tenant (the files below each tenant's
 * `sessions/` and `terminal-sessions/`, names starting with `.` — temp files — left out) and
 * every blob. Blobs go first, put (durable on return) one at a time; then files, written
 * atomically (temp, fsync, rename) one at a time, so an interrupted move leaves no partial
 * session file and none whose blobs are missing. Memory holds one session file or one blob at
 * a time.
 *
 * Session files are copied byte for byte. A breadcrumb names its session file by path; when
 * that path lies in the source root it is rebased onto the destination root (otherwise it
 * would name a file of the old store), and verified as rebased.
 *
 * The verification re-reads both sides after the copy: each file's SHA-256 against its
 * source's, each blob's bytes against its hash on both sides, and the counts.
 */
import { createHash } from 'node:crypto'
import { basename, join, relative, sep } from 'node:path'
import { openBlob } from '../blobs/reader.js'
import { sha256Hex } from '../blobs/hash.js'
import type { BlobStore } from '../blobs/types.js'
import { writeAtomically } from '../session/write-queue.js'
import type { SessionStorage } from '../storage/types.js'
import { CliError, messageOf, type Output } from './args.js'
import { plural, type Reporter } from './progress.js'
import type { Store } from './stores.js'

export interface MoveOptions {
  /** Add to a destination that already holds sessions or blobs (never overwriting a differing file). */
  merge: boolean
  signal: AbortSignal
}

export interface MoveResult {
  tenants: number
  files: number
  fileBytes: number
  blobs: number
  blobBytes: number
  /** Files and blobs the destination already held with the same content (with `merge`). */
  alreadyThere: number
  /** One line per file or blob that differs, could not be copied or could not be verified. */
  problems: string[]
  interrupted: boolean
}

interface Plan { tenant: string, files: string[], blobs: string[] }

/** Top-level directories of a tenant root that hold files to move. */
const TREES = ['sessions', 'terminal-sessions']

/** Copies `from` into `to`, then verifies. Problems are collected, not thrown. */
export async function moveStore (from: Store, to: Store, options: MoveOptions, report: Reporter, stderr: Output): Promise<MoveResult> {
  const plans: Plan[] = []
  for (const tenant of await from.tenants()) {
    plans.push({ tenant, files: listTree(from.storage, from.root(tenant)), blobs: await allHashes(from.blobs(tenant), from.label) })
  }
  if (!options.merge) await refuseNonEmpty(to, plans.map((p) => p.tenant))
  const result: MoveResult = { tenants: plans.length, files: 0, fileBytes: 0, blobs: 0, blobBytes: 0, alreadyThere: 0, problems: [], interrupted: false }
  const files = new Meter('copying session files', plans.reduce((n, p) => n + p.files.length, 0), report, stderr)
  const blobs = new Meter('copying blobs', plans.reduce((n, p) => n + p.blobs.length, 0), report, stderr)
  const stop = (): boolean => (result.interrupted ||= options.signal.aborted)
  // Blobs first: a session file never lands before the blobs its lines refer to (SPEC.md §9.4).
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
    for (const rel of plan.files) {
      if (stop()) return result
      await step(result, `${plan.tenant}: ${rel}`, async () => {
        const bytes = await copyFile(from, to, plan.tenant, rel, result)
        result.files++
        result.fileBytes += bytes
        files.add(bytes)
      })
    }
  }
  files.end()
  await verify(from, to, plans, options, result, new Meter('verifying', files.total + blobs.total, report, stderr), stop)
  return result
}

/** One line for the summary: what was moved. */
export function describeMove (r: MoveResult): string {
  return `${plural(r.files, 'session file')} (${formatBytes(r.fileBytes)}) and ${plural(r.blobs, 'blob')} (${formatBytes(r.blobBytes)}) ` +
    `in ${plural(r.tenants, 'tenant')}${r.alreadyThere > 0 ? `, ${r.alreadyThere} already there` : ''}`
}

async function step (result: MoveResult, what: string, fn: () => Promise<void>): Promise<void> {
  try {
    await fn()
  } catch (err) {
    result.problems.push(`${what}: ${messageOf(err)}`)
  }
}

/** Paths relative to `root` of every file to move below it, sorted. */
function listTree (storage: SessionStorage, root: string): string[] {
  const out: string[] = []
  const walk = (dir: string): void => {
    for (const path of storage.listFilesSync(dir, '*')) if (!basename(path).startsWith('.')) out.push(relative(root, path))
    for (const sub of storage.listDirsSync(dir)) if (!basename(sub).startsWith('.')) walk(sub)
  }
  for (const tree of TREES) walk(join(root, tree))
  return out.sort()
}

async function allHashes (blobs: BlobStore, label: string): Promise<string[]> {
  if (blobs.list === undefined) throw new CliError(`${label}: its blob store cannot list its blobs`)
  const hashes: string[] = []
  for await (const hash of blobs.list()) hashes.push(hash)
  return hashes.sort()
}

/** Refuses a destination holding anything, in its own tenants or in those about to be copied. */
async function refuseNonEmpty (to: Store, tenants: string[]): Promise<void> {
  let files = 0
  let blobs = 0
  for (const tenant of new Set([...await to.tenants(), ...tenants])) {
    files += listTree(to.storage, to.root(tenant)).length
    blobs += (await allHashes(to.blobs(tenant), to.label)).length
  }
  if (files + blobs > 0) {
    throw new CliError(`${to.label} is not empty (${plural(files, 'file')}, ${plural(blobs, 'blob')}); ` +
      'pass --merge to add to it (a file that differs is never overwritten)')
  }
}

/** The source file's text, refused unless it is exactly the bytes on the source (valid UTF-8). */
async function readExact (store: Store, path: string): Promise<string> {
  const text = await store.storage.readText(path)
  const size = store.storage.statSync(path).size
  if (Buffer.byteLength(text, 'utf8') !== size) throw new Error('not valid UTF-8, so it cannot be copied byte for byte')
  return text
}

/** What the destination must hold for the source file `rel` of `tenant`. */
async function expected (from: Store, to: Store, tenant: string, rel: string): Promise<string> {
  const text = await readExact(from, join(from.root(tenant), rel))
  return rel.startsWith(`terminal-sessions${sep}`) ? rebase(text, from.root(tenant), to.root(tenant)) : text
}

/** A breadcrumb's second line (its session file) moved from the `from` root onto the `to` root. */
function rebase (text: string, fromRoot: string, toRoot: string): string {
  const lines = text.split('\n')
  const file = lines[1]
  if (file?.startsWith(fromRoot + sep) === true) lines[1] = toRoot + file.slice(fromRoot.length)
  return lines.join('\n')
}

/** Copies one file; resolves with its size. An existing destination file must already be equal. */
async function copyFile (from: Store, to: Store, tenant: string, rel: string, result: MoveResult): Promise<number> {
  const text = await expected(from, to, tenant, rel)
  const target = join(to.root(tenant), rel)
  if (await to.storage.exists(target)) {
    if (await to.storage.readText(target) !== text) throw new Error('the destination holds a different file at this path (left unchanged)')
    result.alreadyThere++
  } else {
    await writeAtomically(to.storage, target, text)
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
    for (const rel of plan.files) {
      if (stop()) return
      await step(result, `verify ${plan.tenant}: ${rel}`, async () => {
        const text = await expected(from, to, plan.tenant, rel)
        const want = sha256Hex(Buffer.from(text, 'utf8'))
        const got = sha256Hex(Buffer.from(await to.storage.readText(join(to.root(plan.tenant), rel)), 'utf8'))
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
      const files = listTree(to.storage, to.root(plan.tenant)).length
      const blobs = (await allHashes(target, to.label)).length
      const short = options.merge ? files < plan.files.length || blobs < plan.blobs.length : files !== plan.files.length || blobs !== plan.blobs.length
      if (short) throw new Error(`the destination holds ${plural(files, 'file')} and ${plural(blobs, 'blob')}, the source ${plan.files.length} and ${plan.blobs.length}`)
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
