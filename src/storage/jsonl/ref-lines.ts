/**
 * `refLines` of the JSONL store (src/storage/store.ts): the lines of a tenant's sessions that hold
 * one of `REF_MARKS`, from each saved session's file, and from memory for a session that is not
 * saved yet. A file moved or rewritten while it is read (a `move`, a header change) is followed
 * through the index; a session removed meanwhile has nothing left to mark.
 */
import { REF_MARKS } from '../store.js'
import type { SessionStorage } from '../types.js'
import type { ListingIndex } from './listing-index.js'

export interface RefLinesContext {
  storage: SessionStorage
  index: ListingIndex
  /** The absolute path of `rel` (relative to DATA_DIR). */
  abs(rel: string): string
  /** The lines an unsaved session holds in memory, `undefined` when it is saved or not open. */
  held(tenant: string, id: string): readonly string[] | undefined
}

/** Times a file is looked up again when it vanished while read (it moved): then it is gone. */
const FOLLOW_TRIES = 3

export const mayHoldRef = (line: string): boolean => REF_MARKS.some((mark) => line.includes(mark))

/** Session files read at once (the thread pool reads them side by side). */
const PARALLEL = 16

export async function * refLinesOf (ctx: RefLinesContext, tenant: string): AsyncIterable<string> {
  const sessions = ctx.index.sessionsOf(tenant)
  for (let i = 0; i < sessions.length; i += PARALLEL) {
    const read = await Promise.all(sessions.slice(i, i + PARALLEL).map(async ({ id }) => await markedOf(ctx, tenant, id)))
    for (const lines of read) yield * lines
  }
}

/** The marked lines of one session: in memory while unsaved, else from its file (followed when it moved). */
async function markedOf (ctx: RefLinesContext, tenant: string, id: string): Promise<readonly string[]> {
  const held = ctx.held(tenant, id)
  if (held !== undefined) return held.filter(mayHoldRef)
  // Looked up now: a session saved since the listing above has its lines in its file by now.
  const row = ctx.index.get(tenant, id)
  let path = row?.saved === true ? row.path : undefined
  for (let tries = 0; path !== undefined && tries < FOLLOW_TRIES; tries++) {
    const lines = await readMarked(ctx.storage, ctx.abs(path))
    if (lines !== undefined) return lines
    const now = ctx.index.get(tenant, id)
    path = now?.saved === true && now.path !== path ? now.path : undefined
  }
  return []
}

/** The marked lines of one file, `undefined` when it does not exist. */
async function readMarked (storage: SessionStorage, path: string): Promise<string[] | undefined> {
  const found: string[] = []
  let rest = ''
  try {
    for await (const chunk of storage.readTextChunks(path)) {
      const text = rest + chunk
      const lines = text.split('\n')
      rest = lines.pop() ?? ''
      for (const line of lines) if (mayHoldRef(line)) found.push(line)
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
  if (mayHoldRef(rest)) found.push(rest)
  return found
}
