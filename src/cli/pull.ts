/**
 * `session-store pull <id>... --server <url> --into <agent-sessions-dir>`: writes sessions back
 * where pi and oh-my-pi look for them (README "Use it with pi and oh-my-pi"), as the stored bytes,
 * so that `--continue` resumes them on another machine. Blob refs go into the agent's blob
 * directory, or with `--inline-images` their data goes back into the lines, for a reader
 * without a blob store (pi 0.73).
 */
import { relative, resolve } from 'node:path'
import type { SessionStoreClient } from '../client/index.js'
import { EXIT_FAILURE, EXIT_OK, messageOf, stringFlag, UsageError, type Command } from './args.js'
import { fetchBlobs } from './agent-blobs.js'
import { blobDirOf, hasTitleLine, headerOf, sessionFilePath, writeAtomically } from './agent-files.js'
import { plural, Reporter } from './progress.js'
import { serverOf, TOKEN_ENV, withRemote, type Remote } from './remote.js'

export const pullCommand: Command = {
  name: 'pull',
  summary: 'write stored sessions into an agent\'s session directory, to resume them there',
  help: `Usage: session-store pull <id>... --server <url> --into <agent-sessions-dir> [--inline-images]
       session-store pull --cwd <cwd> --server <url> --into <agent-sessions-dir> [--inline-images]

Writes each session (or, with --cwd, every session of that project) as its stored JSONL bytes
where the agent looks for it: <agent-sessions-dir>/<project dir>/<timestamp>_<id>.jsonl, the
project directory named as oh-my-pi names it for a file that starts with its title line, as pi
names it otherwise; a file of that session already there is replaced (atomically). The blobs a
file refers to are fetched into the agent's blob directory (<agent-sessions-dir>/../blobs).
Then \`pi --continue\` or \`omp --continue\` in that project resumes it.

Options:
  --server <url>     the server, e.g. http://127.0.0.1:8787
  --into <dir>       the agent's session directory, e.g. ~/.pi/agent/sessions
  --cwd <cwd>        every session of this project instead of ids
  --inline-images    put image data into the lines instead of the blob directory (for pi 0.73,
                     which has no blob store)
  -h, --help         show this help

Environment:
  ${TOKEN_ENV}  the bearer token, when the server checks tokens
`,
  options: { server: { type: 'string' }, into: { type: 'string' }, cwd: { type: 'string' }, 'inline-images': { type: 'boolean' } },
  positionals: [0, Infinity],
  async run (values, ids, io) {
    const url = stringFlag(values, 'server')
    if (url === undefined) throw new UsageError('pull: missing --server <url>')
    const into = stringFlag(values, 'into')
    if (into === undefined) throw new UsageError('pull: missing --into <agent-sessions-dir>')
    const cwd = stringFlag(values, 'cwd')
    if ((cwd === undefined) === (ids.length === 0)) throw new UsageError('pull: give session ids or --cwd <cwd>, not both')
    const sessionsDir = resolve(io.cwd, into)
    const inline = values['inline-images'] === true
    const report = new Reporter(io.stdout, io.stderr)
    return await withRemote(serverOf(url, io.env), async (remote) => {
      const wanted = cwd === undefined ? ids : await remote.call(async (c) => await sessionsOf(c, cwd))
      let failed = 0
      for (const [i, id] of wanted.entries()) {
        if (io.signal.aborted) break
        report.progress(i, wanted.length, `pulling ${id}`)
        try {
          const file = await pullOne(remote, id, sessionsDir, inline)
          report.line(`pulled ${id} into ${relative(sessionsDir, file)}`)
        } catch (err) {
          failed++
          report.error(`${id}: ${messageOf(remote.error(err))}`)
        }
      }
      report.done()
      report.line(`pulled ${wanted.length - failed} of ${plural(wanted.length, 'session')}` + (failed > 0 ? `, ${failed} failed` : ''))
      return failed === 0 && !io.signal.aborted ? EXIT_OK : EXIT_FAILURE
    })
  },
}

/** Every session of `cwd` (unsaved ones included), newest first. */
async function sessionsOf (client: SessionStoreClient, cwd: string): Promise<string[]> {
  const ids: string[] = []
  let cursor: string | undefined
  do {
    const page = await client.listSessions({ cwd, includeEmpty: true, limit: 1000, ...(cursor === undefined ? {} : { cursor }) })
    ids.push(...page.sessions.map((s) => s.id))
    cursor = page.nextCursor ?? undefined
  } while (cursor !== undefined)
  return ids
}

/** Writes session `id` into `sessionsDir`; returns its path. */
async function pullOne (remote: Remote, id: string, sessionsDir: string, inline: boolean): Promise<string> {
  const text = await remote.client.exportSession(id, inline ? { images: 'inline' } : {})
  const header = headerOf(text)
  if (header === undefined) throw new Error('the stored file has no session header')
  const path = await sessionFilePath(sessionsDir, header, hasTitleLine(text) ? 'omp' : 'pi')
  if (!inline) await fetchBlobs(remote.client, text, blobDirOf(sessionsDir))
  await writeAtomically(path, text)
  return path
}
