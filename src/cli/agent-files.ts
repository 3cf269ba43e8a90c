/**
 * An agent's own session directory, as pi and oh-my-pi lay it out (docs/compatibility.md): one
 * subdirectory per project (`--<cwd>--`, or oh-my-pi's home-relative `-proj`), each holding
 * `<timestamp>_<id>.jsonl` files (oh-my-pi's begin with a title line before the header), and the
 * agent's blob directory beside it (`<agent-dir>/blobs/<sha256>`).
 */
import { createHash } from 'node:crypto'
import { randomBytes } from 'node:crypto'
import { mkdir, open, readdir, rename, rm, writeFile } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { sessionDirNames } from '../session/agent-dirs.js'
import { encodeCwd, sessionFileName } from '../session/cwd.js'
import { isTitleSlot, isValidHeader, parseJsonlLenient } from '../session/parser.js'
import type { SessionHeader } from '../session/types.js'

/** The blob directory of the agent whose session directory is `sessionsDir`. */
export function blobDirOf (sessionsDir: string): string {
  return join(dirname(resolve(sessionsDir)), 'blobs')
}

/** Every `*.jsonl` file one directory below `sessionsDir` (the agents' project directories), sorted. */
export async function sessionFiles (sessionsDir: string): Promise<string[]> {
  const out: string[] = []
  for (const dir of await entries(sessionsDir)) {
    if (!dir.isDirectory() || dir.name.startsWith('.')) continue
    const path = join(sessionsDir, dir.name)
    for (const file of await entries(path)) {
      if (file.isFile() && file.name.endsWith('.jsonl') && !file.name.startsWith('.')) out.push(join(path, file.name))
    }
  }
  return out.sort()
}

async function entries (dir: string): Promise<Array<{ name: string, isFile: () => boolean, isDirectory: () => boolean }>> {
  try {
    return await readdir(dir, { withFileTypes: true })
  } catch {
    return []
  }
}

/** The header of a session file's text (an agent's title line folded into it), or `undefined` for no session file. */
export function headerOf (text: string): SessionHeader | undefined {
  // The header is on the first line, or the second behind a title line.
  let end = -1
  for (let line = 0; line < 2; line++) end = text.indexOf('\n', end + 1)
  const header = parseJsonlLenient(end === -1 ? text : text.slice(0, end))[0]
  return isValidHeader(header) ? header : undefined
}

/** True when the text begins with oh-my-pi's title line. */
export function hasTitleLine (text: string): boolean {
  const end = text.indexOf('\n')
  if (end === -1) return false
  try {
    return isTitleSlot(JSON.parse(text.slice(0, end)) as Record<string, unknown>)
  } catch {
    return false
  }
}

/**
 * Where an agent looks for a session of `cwd`: oh-my-pi (`omp`) under its home- or
 * tmp-relative name (`-proj`), pi under `--<cwd>--` (SPEC.md §2.2).
 */
export function agentDirName (cwd: string, agent: 'pi' | 'omp'): string {
  if (agent === 'pi') return encodeCwd(cwd)
  const names = sessionDirNames(cwd)
  return names[names.length - 1]!
}

/** The file of session `id` in `sessionsDir` (any project directory), or `undefined`. */
export async function findSessionFile (sessionsDir: string, id: string): Promise<string | undefined> {
  return (await sessionFiles(sessionsDir)).find((f) => basename(f).endsWith(`_${id}.jsonl`))
}

/** Where a session file goes in `sessionsDir`: its existing file, else its agent's directory and name. */
export async function sessionFilePath (sessionsDir: string, header: SessionHeader, agent: 'pi' | 'omp'): Promise<string> {
  const found = await findSessionFile(sessionsDir, header.id)
  if (found !== undefined) return found
  return join(sessionsDir, agentDirName(String(header.cwd ?? ''), agent), sessionFileName(String(header.timestamp ?? new Date(0).toISOString()), header.id))
}

/** Every distinct blob hash `text` refers to (`blob:sha256:<hex>`). */
export function blobHashes (text: string): string[] {
  return [...new Set([...text.matchAll(/blob:sha256:([0-9a-f]{64})/g)].map((m) => m[1]!))]
}

/** `path`'s bytes from `start` to `end` (exclusive). */
export async function readRange (path: string, start: number, end: number): Promise<Buffer> {
  const fh = await open(path, 'r')
  try {
    const bytes = Buffer.alloc(Math.max(0, end - start))
    let read = 0
    while (read < bytes.length) {
      const { bytesRead } = await fh.read(bytes, read, bytes.length - read, start + read)
      if (bytesRead === 0) break
      read += bytesRead
    }
    return bytes.subarray(0, read)
  } finally {
    await fh.close()
  }
}

/** SHA-256 (hex) of `bytes`. */
export function sha256 (bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex')
}

/** Writes `bytes` to `path` through a temp file beside it and a rename: `path` is old or new, never half. */
export async function writeAtomically (path: string, bytes: Uint8Array | string): Promise<void> {
  await mkdir(dirname(path), { recursive: true })
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(8).toString('hex')}.tmp`)
  try {
    await writeFile(temp, bytes, { flush: true })
    await rename(temp, path)
  } catch (err) {
    await rm(temp, { force: true })
    throw err
  }
}
