/**
 * Agent session directories for the `sync` and `pull` tests, written the way pi and oh-my-pi
 * lay them out (one directory per project, `<timestamp>_<id>.jsonl`, oh-my-pi's title line and
 * blob directory), and a server in this process for the CLI to talk to.
 */
import { createHash } from 'node:crypto'
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'

export type Json = Record<string, unknown>

export interface AgentDir {
  root: string
  /** `<root>/agent/sessions`: what `sync` and `pull` are given. */
  sessions: string
  /** `<root>/agent/blobs`. */
  blobs: string
  cleanup: () => void
}

export function agentDir (): AgentDir {
  const root = mkdtempSync(join(tmpdir(), 'ss-agentdir-'))
  const sessions = join(root, 'agent', 'sessions')
  const blobs = join(root, 'agent', 'blobs')
  mkdirSync(sessions, { recursive: true })
  mkdirSync(blobs, { recursive: true })
  return { root, sessions, blobs, cleanup: () => { rmSync(root, { recursive: true, force: true }) } }
}

const TS = '2026-03-14T15:04:07.123Z'

export const header = (id: string, cwd = '/work/demo', extra: Json = {}): Json => ({ type: 'session', version: 3, id, timestamp: TS, cwd, ...extra })
export const user = (id: string, parentId: string | null, content: unknown = `user ${id}`): Json =>
  ({ type: 'message', id, parentId, timestamp: TS, message: { role: 'user', content, timestamp: 1 } })
export const assistant = (id: string, parentId: string | null, text = `assistant ${id}`): Json => ({
  type: 'message',
  id,
  parentId,
  timestamp: TS,
  message: {
    role: 'assistant',
    content: [{ type: 'text', text }],
    provider: 'openai',
    model: 'gpt-4o',
    usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: 'stop',
    timestamp: 2,
  },
})

/** oh-my-pi's fixed-width title line (256 bytes with its newline). */
export function titleLine (title: string): string {
  const line = (pad: string): string => JSON.stringify({ type: 'title', v: 1, title, updatedAt: TS, pad })
  return line(' '.repeat(255 - Buffer.byteLength(line(''), 'utf8'))) + '\n'
}

export const lines = (...records: Json[]): string => records.map((r) => JSON.stringify(r) + '\n').join('')

/** Writes a session file at `<sessions>/<dir>/<ts>_<id>.jsonl`; returns its path. */
export function writeSession (dir: AgentDir, project: string, id: string, text: string): string {
  mkdirSync(join(dir.sessions, project), { recursive: true })
  const path = join(dir.sessions, project, `2026-03-14T15-04-07-123Z_${id}.jsonl`)
  writeFileSync(path, text)
  return path
}

export const append = (path: string, ...records: Json[]): void => { appendFileSync(path, lines(...records)) }

/** Bytes of a fixed pattern as base64 (over the blob threshold), and their SHA-256. */
export function image (seed = 1): { data: string, hash: string } {
  const bytes = Buffer.alloc(1200)
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + seed * 17) & 0xff
  return { data: bytes.toString('base64'), hash: createHash('sha256').update(bytes).digest('hex') }
}

/** A server on a real socket (the memory store); `stop` closes it. */
export async function listeningApp (port = 0): Promise<{ app: App, url: string, stop: () => Promise<void> }> {
  const app = await buildTestApp()
  const url = await app.listen({ port, host: '127.0.0.1' })
  return { app, url, stop: async () => { await app.close() } }
}

export async function exported (app: App, id: string, query = ''): Promise<string | undefined> {
  const res = await app.inject({ method: 'GET', url: `/v1/sessions/${id}/export${query}` })
  return res.statusCode === 200 ? res.body : undefined
}

/**
 * Polls `check` (every 50 ms) until it resolves true; throws with `what` after `timeoutMs` (which
 * leaves room for a child process started through tsx on a busy machine).
 */
export async function eventually (check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!await check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
