/**
 * The group commit of a session's appends (SPEC.md §8.4): requests that arrive while a batch is
 * being stored wait, then go together as the next batch, one journal write. A batch is applied to
 * the session's model (each request checked whole first, so a refused one changes nothing), its
 * lines written, and each request answered once they are stored. When the write does not happen
 * the model is taken back to where it was, so a refused or failed request leaves no trace:
 * - the session moved on in the store (another server appended): what it appended is added, and
 *   the batch applied again on top of it, so an append without `If-Match` goes after it;
 * - a key of the batch was answered already: that request gets the kept answer, the rest go again;
 * - the write failed: every request of the batch fails, and the session is loaded anew next time.
 */
import { stringifyJson } from '../session/json-text.js'
import { prepareRecordForWrite, serializeRecord, storedForm } from '../session/persist-transform.js'
import type { FileRecord, SessionEntryBase } from '../session/types.js'
import type { KeptAnswer, StoredLine } from '../storage/store.js'
import type { OpenSession } from './open-session.js'
import type { RegistryCore } from './registry-core.js'
import type { Appended, AppendResult } from './types.js'

/**
 * A job's answer: `texts` holds, for each new entry, the JSON text its stored line was made from
 * when the line is exactly that (`answerJson` writes the answer from them).
 */
export interface Committed extends Appended {
  replayed: boolean
  texts?: ReadonlyArray<string | undefined>
}

/** One request's part of a batch. */
export interface AppendJob {
  /** The request's Idempotency-Key and body hash, when it sent a key. */
  key?: { key: string, bodyHash: string }
  /** Checks the request against the session and appends its entries to the model; throws before changing anything. */
  apply: (session: OpenSession) => void
  resolve: (answer: Committed) => void
  reject: (err: unknown) => void
}

/** The batches of one session, one at a time. */
export class AppendQueue {
  readonly #waiting: AppendJob[] = []
  #running = false

  /** Queues `job`; it is applied, stored and answered with the next batch. */
  submit (core: RegistryCore, session: OpenSession, job: AppendJob): void {
    this.#waiting.push(job)
    if (!this.#running) void this.#drain(core, session)
  }

  async #drain (core: RegistryCore, session: OpenSession): Promise<void> {
    this.#running = true
    try {
      while (this.#waiting.length > 0) {
        const jobs = this.#waiting.splice(0)
        await session.lock.run(async () => { await commit(core, session, jobs) })
      }
    } finally {
      this.#running = false
    }
  }
}

/** What one job appended, and its answer; `at` is the position of its first entry in the batch. */
interface Applied { job: AppendJob, answer: Appended, at: number }

async function commit (core: RegistryCore, session: OpenSession, jobs: AppendJob[]): Promise<void> {
  for (;;) {
    if (session.deleted) {
      for (const job of jobs) job.reject(core.notFound(session))
      return
    }
    const mark = session.checkpoint()
    const applied = applyAll(core, session, jobs, mark.entries)
    if (applied.length === 0) return
    let outcome
    try {
      const { lines, texts } = await linesOf(core, session.model.entriesSlice(mark.entries, session.model.entryCount()))
      const save = session.saved || session.model.hasAssistant()
      const answers = keptAnswers(applied, texts, save)
      // Jobs that added nothing (records the session held already) leave nothing to write, unless answers to keep.
      outcome = lines.length === 0 && answers.length === 0 ? { ok: true as const } : await session.journal.append({ lines, save, info: core.listing(session), answers })
      if (outcome.ok) {
        const bytes = lines.reduce((n, l) => n + l.line.length + 1, 0)
        core.stored(session, bytes)
        for (const { job, answer, at } of applied) {
          const result = { ...answer.result, persisted: session.saved }
          job.resolve({ result, etag: answer.etag, replayed: false, texts: texts.slice(at, at + result.entries.length) })
        }
        return
      }
    } catch (err) {
      session.rollback(mark)
      const failure = core.writeFailed(session, err)
      for (const { job } of applied) job.reject(failure)
      return
    }
    session.rollback(mark)
    jobs = applied.map((a) => a.job)
    if ('stale' in outcome) {
      try {
        await core.catchUp(session, outcome.stale)
      } catch (err) {
        for (const job of jobs) job.reject(err)
        return
      }
      continue
    }
    jobs = []
    for (const { job } of applied) {
      const kept = job.key === undefined ? undefined : outcome.answered.get(job.key.key)
      if (kept === undefined) jobs.push(job)
      else replay(core, job, kept)
    }
  }
}

/**
 * Applies each job in turn; a job that throws is answered with its error and leaves no trace.
 * `base`: the session's entry count before the batch.
 */
function applyAll (core: RegistryCore, session: OpenSession, jobs: AppendJob[], base: number): Applied[] {
  const applied: Applied[] = []
  for (const job of jobs) {
    const before = session.checkpoint()
    try {
      job.apply(session)
    } catch (err) {
      session.rollback(before)
      job.reject(err)
      continue
    }
    core.touch(session)
    const entries = session.model.entriesSlice(before.entries, session.model.entryCount())
    const result: AppendResult = {
      entries,
      leafId: session.model.getLeafId(),
      firstSeq: before.entries + 1,
      lastSeq: before.entries + entries.length,
      persisted: false,
    }
    applied.push({ job, answer: { result, etag: core.etag(session) }, at: before.entries - base })
  }
  return applied
}

/**
 * The stored lines of `entries` (SPEC.md §9 applied; image bytes stored first), and for each
 * the entry's JSON text when its line is exactly that (each entry is written as JSON once).
 */
async function linesOf (core: RegistryCore, entries: readonly SessionEntryBase[]): Promise<{ lines: StoredLine[], texts: Array<string | undefined> }> {
  const lines: StoredLine[] = []
  const texts: Array<string | undefined> = []
  for (const entry of entries) {
    const form = storedForm(entry as FileRecord)
    const line = form?.line ?? serializeRecord(await prepareRecordForWrite(entry as FileRecord, core.blobs)).slice(0, -1)
    lines.push({ id: entry.id, line })
    texts.push(form?.same === true ? line : undefined)
  }
  return { lines, texts }
}

/** The answers of the keyed jobs, as they will be once the batch is stored. */
function keptAnswers (applied: readonly Applied[], texts: ReadonlyArray<string | undefined>, persisted: boolean): KeptAnswer[] {
  const answers: KeptAnswer[] = []
  for (const { job, answer, at } of applied) {
    if (job.key === undefined) continue
    const result = { ...answer.result, persisted }
    const json = answerJson(result, result.entries, texts.slice(at, at + result.entries.length))
    answers.push({ key: job.key.key, bodyHash: job.key.bodyHash, answer: `{"result":${json},"etag":${JSON.stringify(answer.etag)}}` })
  }
  return answers
}

/**
 * The JSON text of the answer `{...result, entries}` (`JSON.stringify`'s, key order included),
 * made of `texts` (those of `result.entries`) wherever `entries` holds the same objects.
 */
export function answerJson (result: AppendResult, entries: readonly SessionEntryBase[], texts: ReadonlyArray<string | undefined>): string {
  let list = ''
  for (let i = 0; i < entries.length; i++) {
    const text = entries[i] === result.entries[i] ? texts[i] : undefined
    list += `${i === 0 ? '' : ','}${text ?? stringifyJson(entries[i]) ?? 'null'}`
  }
  const { leafId, firstSeq, lastSeq, persisted } = result
  return `{"entries":[${list}],"leafId":${JSON.stringify(leafId)},"firstSeq":${firstSeq},"lastSeq":${lastSeq},"persisted":${persisted}}`
}

/** Answers `job` with an answer kept before: again, or 422 for another body under the key. */
function replay (core: RegistryCore, job: AppendJob, kept: KeptAnswer): void {
  if (job.key?.bodyHash !== kept.bodyHash) {
    job.reject(core.keyReused())
    return
  }
  job.resolve({ ...(JSON.parse(kept.answer) as Appended), replayed: true })
}
