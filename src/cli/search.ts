/**
 * `session-store search <query> --server <url>`: searches the caller's sessions (README
 * "Search") and prints each hit: session, entry, time and title (or cwd), then its snippet with
 * the matches marked; with `--json`, each hit as one line of compact JSON.
 */
import { EXIT_OK, integerFlag, stringFlag, UsageError, writeOut, type Command } from './args.js'
import { serverOf, TOKEN_ENV, withRemote } from './remote.js'

export const searchCommand: Command = {
  name: 'search',
  summary: "search the text of the caller's sessions",
  help: `Usage: session-store search <query> --server <url> [--cwd <cwd>] [--limit <n>] [--thinking] [--json]

Searches user and assistant text, tool calls and results, custom messages, titles and
summaries of the sessions the token may read (GET /v1/search), best match first, then newest.
Query syntax: words (all must match), "phrases", -excluded and prefix*. Prints each hit as
<session> <entry> <timestamp> <title or cwd>, then its snippet with the matches between « ».
A query that starts with - goes after --: session-store search --server <url> -- -draft.

Options:
  --server <url>   the server, e.g. http://127.0.0.1:8787
  --cwd <cwd>      only sessions of this working directory
  --limit <n>      hits to print (default 20, at most 100)
  --thinking       also search the thinking of assistant messages
  --json           one hit per line as JSON
  -h, --help       show this help

Environment:
  ${TOKEN_ENV}  the bearer token, when the server checks tokens
`,
  options: { server: { type: 'string' }, cwd: { type: 'string' }, limit: { type: 'string' }, thinking: { type: 'boolean' }, json: { type: 'boolean' } },
  positionals: [1, 1],
  async run (values, [query], io) {
    const server = stringFlag(values, 'server')
    if (server === undefined) throw new UsageError('search: missing --server <url>')
    const limit = integerFlag(values, 'limit')
    const options = { cwd: stringFlag(values, 'cwd'), limit, thinking: values.thinking === true ? true : undefined }
    await withRemote(serverOf(server, io.env), async (remote) => {
      let found
      try {
        found = await remote.client.search(query as string, options, { signal: io.signal })
      } catch (err) {
        throw remote.error(err)
      }
      for (const hit of found.hits) {
        await writeOut(io.stdout, values.json === true
          ? JSON.stringify(hit) + '\n'
          : `${hit.sessionId} ${hit.entryId ?? '-'} ${hit.timestamp} ${hit.title ?? hit.cwd}\n  ${hit.snippet.replace(/\s+/g, ' ')}\n`)
      }
      if (found.hits.length === 0 && values.json !== true) io.stderr.write('no hits\n')
    })
    return EXIT_OK
  },
}
