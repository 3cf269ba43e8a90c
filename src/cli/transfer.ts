/**
 * `session-store import <file.jsonl…>` and `session-store export <id>`: moving session files in
 * and out of a server or a DATA_DIR (API.md "Sessions": import, export).
 */
import { readFile } from 'node:fs/promises'
import { basename, resolve } from 'node:path'
import { writeAtomically } from './agent-files.js'
import { codeOf, EXIT_FAILURE, EXIT_OK, messageOf, stringFlag, writeOut, type Command, type Io } from './args.js'
import { plural, Reporter } from './progress.js'
import { TOKEN_ENV } from './remote.js'
import { exportSession, parseTarget, TARGET_OPTIONS, withImporter, type Importer } from './target.js'

const TARGET_HELP = `  --server <url>     work through a running server, e.g. http://127.0.0.1:8787
  --data-dir <dir>   work on a DATA_DIR directly; refused while a server holds its lock`

const TARGET_ENV_HELP = `Environment:
  ${TOKEN_ENV}  the bearer token sent to --server, when the server checks tokens`

/** `import <file.jsonl…> (--server | --data-dir) [--new-id]`. */
export const importCommand: Command = {
  name: 'import',
  summary: 'import session files (any version) into a server or a DATA_DIR',
  help: `Usage: session-store import <file.jsonl>... (--server <url> | --data-dir <dir>) [--new-id]

Imports each session file as a session, as POST /v1/sessions/import does: the session keeps
the id in the file's header and old versions are migrated to version 3. A file whose id
exists already is refused, unless --new-id imports a copy under a new id (its parentSession
is the file's id). Prints one line per imported file and a summary; on a terminal, progress
is shown on stderr. Exits 1 when any file failed.

Options:
${TARGET_HELP}
  --new-id           import copies under new ids instead of refusing taken ids
  -h, --help         show this help

${TARGET_ENV_HELP}
`,
  options: { ...TARGET_OPTIONS, 'new-id': { type: 'boolean' } },
  positionals: [1, Infinity],
  async run (values, files, io) {
    const target = parseTarget(values, io.cwd, io.env)
    const newId = values['new-id'] === true
    const report = new Reporter(io.stdout, io.stderr)
    const { imported, failed, denied } = await withImporter(target, async (importer) => await importAll(importer, files, newId, io, report))
    report.done()
    const left = files.length - imported - failed
    report.line(`imported ${imported} of ${plural(files.length, 'file')}` +
      (failed > 0 ? `, ${failed} failed` : '') + (left > 0 ? ` (${denied ? 'access denied' : 'interrupted'}: ${left} not attempted)` : ''))
    return imported === files.length ? EXIT_OK : EXIT_FAILURE
  },
}

/**
 * Imports `files` in order until done or interrupted (Ctrl-C ends the run after the current
 * file). A 401 or 403 stops the run (`denied`): every further file would get the same answer.
 */
async function importAll (importer: Importer, files: string[], newId: boolean, io: Io, report: Reporter): Promise<{ imported: number, failed: number, denied: boolean }> {
  let imported = 0
  let failed = 0
  let denied = false
  for (const [i, file] of files.entries()) {
    if (io.signal.aborted || denied) break
    report.progress(i, files.length, `importing ${basename(file)}`)
    try {
      const session = await importer.import(await readFile(resolve(io.cwd, file)), newId)
      imported++
      report.line(`imported ${file} as ${session.id} (${plural(session.entryCount, 'entry', 'entries')})`)
    } catch (err) {
      failed++
      const hint = codeOf(err) === 'SS_SESSION_EXISTS' ? ' (use --new-id to import a copy)' : ''
      report.error(`${file}: ${messageOf(err)}${hint}`)
      const status = (err as { status?: unknown }).status
      denied = status === 401 || status === 403
    }
  }
  return { imported, failed, denied }
}

/** `export <id> (--server | --data-dir) [--out <file>]`. */
export const exportCommand: Command = {
  name: 'export',
  summary: 'write a stored session file to stdout or a file',
  help: `Usage: session-store export <id> (--server <url> | --data-dir <dir>) [--out <file>]

Writes the session's stored JSONL bytes to stdout, or to --out (replaced atomically). From a
server this is GET /v1/sessions/{id}/export; from a DATA_DIR the file is read as it is stored
(nothing is migrated or written).

Options:
${TARGET_HELP}
  --out <file>       write to this file instead of stdout
  -h, --help         show this help

${TARGET_ENV_HELP}
`,
  options: { ...TARGET_OPTIONS, out: { type: 'string' } },
  positionals: [1, 1],
  async run (values, [id], io) {
    const target = parseTarget(values, io.cwd, io.env)
    const bytes = await exportSession(target, id as string)
    const out = stringFlag(values, 'out')
    if (out === undefined) {
      await writeOut(io.stdout, bytes)
      return EXIT_OK
    }
    await writeAtomically(resolve(io.cwd, out), bytes)
    io.stderr.write(`exported ${id as string} to ${out} (${plural(bytes.byteLength, 'byte')})\n`)
    return EXIT_OK
  },
}
