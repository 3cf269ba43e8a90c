/**
 * `session-store gc --server <url> [--dry-run]`: runs a collection of the token's tenant's
 * unreferenced blobs on a server (`POST /v1/blobs/gc`, admin scope) and prints its report.
 */
import { EXIT_OK, stringFlag, UsageError, writeOut, type Command } from './args.js'
import { serverOf, TOKEN_ENV, withRemote } from './remote.js'

/** `gc --server <url> [--dry-run]`. */
export const gcCommand: Command = {
  name: 'gc',
  summary: "collect a tenant's unreferenced blobs on a server",
  help: `Usage: session-store gc --server <url> [--dry-run]

Runs a collection of the blobs no stored session references (and that were not put within the
server's BLOB_GC_GRACE_MS) through POST /v1/blobs/gc, and prints its report as JSON:
{scanned, referenced, keptYoung, deleted, bytesFreed}. With tokens, the collection is of the
token's tenant and needs the admin scope. Exits 1 when the server refuses (409 while another
collection of the tenant runs).

Options:
  --server <url>   the server, e.g. http://127.0.0.1:8787
  --dry-run        remove nothing; report what a collection would remove
  -h, --help       show this help

Environment:
  ${TOKEN_ENV}  the bearer token, when the server checks tokens
`,
  options: { server: { type: 'string' }, 'dry-run': { type: 'boolean' } },
  positionals: [0, 0],
  async run (values, _positionals, io) {
    const server = stringFlag(values, 'server')
    if (server === undefined) throw new UsageError('gc: missing --server <url>')
    const dryRun = values['dry-run'] === true
    const report = await withRemote(serverOf(server, io.env), async (remote) => await remote.call(async (c) => await c.collectBlobs({ dryRun })))
    await writeOut(io.stdout, JSON.stringify(report) + '\n')
    return EXIT_OK
  },
}
