/**
 * The journal of one session of the JSONL store (SPEC.md §8): appends go to the end of its file
 * with one write and one `fdatasync` per batch (the first one creates the file and syncs its
 * directory); header changes and whole replacements are atomic rewrites (temp file, fsync,
 * rename, directory fsync). A session under the deferral rule (§8.3) has no file: its lines are
 * held here, in memory, until the append that saves it writes them all.
 *
 * One process owns a DATA_DIR (its lock file), so no write is ever stale here.
 */
import { basename, dirname, join } from 'node:path'
import { MoveDestinationExists } from '../../errors.js'
import { commitBatch } from '../../metrics/instruments.js'
import type { Logger } from '../../session/logger.js'
import { writeAtomically } from '../../session/write-queue.js'
import { headLineCount, splitHead, textOf, type SessionPrefix } from '../session-head.js'
import type { SessionStorage, SessionStorageWriter } from '../types.js'
import type { AppendBatch, Journal, ListingItem, Newer, StoredLine, Version, WriteOutcome } from '../store.js'
import { AnswerMemory } from './answer-memory.js'
import type { IndexRow, ListingIndex } from './listing-index.js'
import type { SearchIndex } from './search-index.js'

/** What a journal needs of its store. */
export interface JournalContext {
  storage: SessionStorage
  index: ListingIndex
  search: SearchIndex
  log: Logger
  /** The next version of the store (larger than every earlier one). */
  nextVersion(): Version
  /** The absolute path of `rel` (relative to DATA_DIR), and back. */
  abs(rel: string): string
  rel(path: string): string
  /** The session directory of `cwd` in `tenant`'s root. */
  dirOf(tenant: string, cwd: string): string
  /** The journal closed or its session was removed. */
  forget(journal: JsonlJournal): void
}

const OK: WriteOutcome = { ok: true }

/** Batches observed in the commit-size histogram, with its label bound once. */
const fileCommit = commitBatch.labels({ storage: 'file' })

export class JsonlJournal implements Journal {
  readonly tenant: string
  readonly id: string
  readonly #ctx: JournalContext
  #row: IndexRow
  /** The lines of a session not saved yet (header first); undefined once it has a file. */
  #held: string[] | undefined
  /** The file ends without `"\n"` (a torn append): the next append starts a new line first. */
  #torn: boolean
  readonly #prefix: SessionPrefix
  #writer: SessionStorageWriter | undefined
  readonly #answers = new AnswerMemory()
  #tail: Promise<unknown> = Promise.resolve()

  constructor (ctx: JournalContext, row: IndexRow, prefix: SessionPrefix, held: string[] | undefined, torn: boolean) {
    this.#ctx = ctx
    this.tenant = row.tenant
    this.id = row.id
    this.#row = row
    this.#prefix = prefix
    this.#held = held
    this.#torn = torn
  }

  get version (): Version { return this.#row.version }
  get saved (): boolean { return this.#row.saved }
  /** The lines of a session not saved yet (header first), `undefined` once it has a file. */
  get held (): readonly string[] | undefined { return this.#held }
  /** The session file's absolute path (where it will be, while unsaved). */
  get path (): string { return this.#ctx.abs(this.#row.path) }

  /** The session's file was read whole: it starts with `start` and ends torn or not. */
  loaded (start: string, torn: boolean): void {
    this.#prefix.reset(start)
    this.#torn = torn
  }

  append (batch: AppendBatch): Promise<WriteOutcome> {
    return this.#serial(async () => {
      const answered = this.#answers.answered(batch.answers)
      if (answered !== undefined) return { ok: false, answered }
      const lines = batch.lines.map((l) => l.line)
      if (this.#held !== undefined && !batch.save) {
        this.#held.push(...lines)
        this.#prefix.grow(textOf(lines))
      } else {
        const text = (this.#held === undefined ? '' : textOf(this.#held)) + textOf(lines)
        fileCommit.observe(lines.length)
        // An append of no lines (answers to keep only) writes nothing.
        if (text !== '') {
          await this.#write((this.#torn ? '\n' : '') + text)
          this.#torn = false
        }
        if (this.#held !== undefined) this.#prefix.reset(text)
        else this.#prefix.grow(text)
        this.#held = undefined
        this.#row.size += Buffer.byteLength(text, 'utf8')
      }
      this.#answers.keep(batch.answers)
      this.#commit(batch.info, this.#row.path)
      this.#ctx.search.append(this.tenant, this.id, lines)
      return OK
    })
  }

  rewriteHeader (header: string, info: ListingItem): Promise<WriteOutcome> {
    return this.#serial(async () => {
      const rel = this.#ctx.rel(join(this.#ctx.dirOf(this.tenant, info.cwd), basename(this.path)))
      if (rel !== this.#row.path && this.#ctx.storage.existsSync(this.#ctx.abs(rel))) {
        throw new MoveDestinationExists(`${basename(dirname(rel))}/${basename(rel)}`)
      }
      if (this.#held !== undefined) {
        this.#held.splice(0, headLineCount(this.#held), header)
      } else {
        const from = this.path
        const [, rest] = splitHead(await this.#ctx.storage.readText(from))
        await this.#dropWriter()
        const text = header + '\n' + rest
        await writeAtomically(this.#ctx.storage, this.#ctx.abs(rel), text)
        if (rel !== this.#row.path) await this.#unlink(from)
        this.#row.size = Buffer.byteLength(text, 'utf8')
      }
      this.#prefix.setHead(header + '\n')
      this.#commit(info, rel)
      this.#ctx.search.head(this.tenant, this.id, header)
      return OK
    })
  }

  replace (lines: readonly StoredLine[], info: ListingItem): Promise<WriteOutcome> {
    return this.#serial(async () => {
      const all = lines.map((l) => l.line)
      const text = textOf(all)
      if (this.#held !== undefined) this.#held = all
      else {
        await this.#dropWriter()
        await writeAtomically(this.#ctx.storage, this.path, text)
        this.#torn = false
        this.#row.size = Buffer.byteLength(text, 'utf8')
      }
      this.#prefix.reset(text)
      this.#commit(info, this.#row.path)
      this.#ctx.search.replace(this.tenant, this.id, all)
      return OK
    })
  }

  /** Nothing but this journal writes the session. */
  async refresh (): Promise<Newer | undefined> { return undefined }

  remove (): Promise<WriteOutcome> {
    return this.#serial(async () => {
      await this.#dropWriter()
      if (this.#held === undefined) await this.#unlink(this.path)
      this.#ctx.index.delete(this.tenant, this.id)
      this.#ctx.search.remove(this.tenant, this.id)
      this.#ctx.forget(this)
      return OK
    })
  }

  close (): Promise<void> {
    return this.#serial(async () => {
      await this.#dropWriter()
      // An unsaved session lives in this journal only (SPEC.md §8.3): it goes with it.
      if (this.#held !== undefined) {
        this.#ctx.index.delete(this.tenant, this.id)
        this.#ctx.search.remove(this.tenant, this.id)
      }
      this.#ctx.forget(this)
    })
  }

  async #write (text: string): Promise<void> {
    const storage = this.#ctx.storage
    if (this.#writer === undefined) {
      storage.ensureDirSync(dirname(this.path))
      this.#writer = storage.openWriter(this.path, { flags: 'a' })
    }
    try {
      await this.#writer.writeLine(text)
      await this.#writer.fsync()
    } catch (err) {
      // The writer keeps its first error: the next write opens a fresh one on what the file holds.
      await this.#dropWriter()
      throw err
    }
  }

  async #dropWriter (): Promise<void> {
    const writer = this.#writer
    this.#writer = undefined
    await writer?.close().catch(() => {})
  }

  async #unlink (path: string): Promise<void> {
    const storage = this.#ctx.storage
    if (!storage.existsSync(path)) return
    await storage.unlink(path)
    await storage.syncDir(dirname(path)).catch(() => {})
  }

  /** A new version, with the session's listing facts, in the index. */
  #commit (info: ListingItem, rel: string): void {
    this.#row = {
      ...this.#row,
      path: rel,
      saved: this.#held === undefined,
      version: this.#ctx.nextVersion(),
      modified: info.modifiedMs,
      item: info,
      recent: this.#prefix.name(),
      checked: Date.now(),
    }
    this.#ctx.index.put(this.#row)
  }

  /** Runs `fn` after every earlier operation of this journal. */
  #serial<T> (fn: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(fn, fn)
    this.#tail = run.catch(() => {})
    return run
  }
}

/** The file's text at `path`, read as it is consumed; its first `prefixChars` and whether it ends torn go to `journal`. */
export async function * readCapturing (storage: SessionStorage, path: string, journal: JsonlJournal, prefixChars: number): AsyncIterable<string> {
  let start = ''
  let last = ''
  for await (const chunk of storage.readTextChunks(path)) {
    if (start.length < prefixChars) start = (start + chunk).slice(0, prefixChars)
    if (chunk !== '') last = chunk
    yield chunk
  }
  journal.loaded(start, last !== '' && !last.endsWith('\n'))
}
