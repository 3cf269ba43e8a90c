/**
 * `session-store tail <id> --server <url>`: follows a session live over SSE (API.md "Live
 * stream") and prints each entry as one line of compact JSON. The SDK's `subscribe` resumes
 * with `Last-Event-ID` whenever the stream drops (a restart, or a slow reader cut off), so no
 * entry is missed or repeated; the tail ends on Ctrl-C or when the session is deleted.
 */
import { EXIT_OK, integerFlag, stringFlag, UsageError, writeOut, type Command, type Io } from './args.js'
import { serverOf, TOKEN_ENV, withRemote, type Remote } from './remote.js'

/** `tail <id> --server <url> [--after <seq>]`. */
export const tailCommand: Command = {
  name: 'tail',
  summary: 'follow a session live, one entry per line',
  help: `Usage: session-store tail <id> --server <url> [--after <seq>]

Follows the session over GET /v1/sessions/{id}/events and prints every entry as one line of
compact JSON, in seq order: first those already stored, then each appended one as it
arrives. Reconnects (resuming after the last printed entry) when the stream drops. Runs until
Ctrl-C or until the session is deleted; both exit 0.

Options:
  --server <url>   the server, e.g. http://127.0.0.1:8787
  --after <seq>    start after this seq (0 = from the first entry; default)
  -h, --help       show this help

Environment:
  ${TOKEN_ENV}  the bearer token, when the server checks tokens
`,
  options: { server: { type: 'string' }, after: { type: 'string' } },
  positionals: [1, 1],
  async run (values, [id], io) {
    const server = stringFlag(values, 'server')
    if (server === undefined) throw new UsageError('tail: missing --server <url>')
    const after = integerFlag(values, 'after')
    await withRemote(serverOf(server, io.env), async (remote) => { await follow(remote, id as string, after, io) })
    return EXIT_OK
  },
}

/** Prints entries until the session is deleted or `io.signal` aborts. */
async function follow (remote: Remote, id: string, after: number | undefined, io: Io): Promise<void> {
  const events = remote.client.subscribe(id, { after, signal: io.signal })
  try {
    for await (const event of events) {
      if (event.type === 'entry') await writeOut(io.stdout, JSON.stringify(event.entry) + '\n')
      else if (event.type === 'deleted') io.stderr.write(`session ${id} was deleted\n`)
    }
  } catch (err) {
    throw remote.error(err)
  }
}
