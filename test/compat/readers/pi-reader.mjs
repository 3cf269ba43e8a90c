// Runs under Node (`node test/compat/readers/pi-reader.mjs <request.json>`). Opens or writes
// session files with @mariozechner/pi-coding-agent's own SessionManager and prints one JSON
// line on stdout: what that agent sees. Same requests and answers as omp-reader.mjs.
import { readFileSync } from 'node:fs'
import { SessionManager } from '@mariozechner/pi-coding-agent'
import { flatTree } from './tree.mjs'
import { writeEveryKind } from './write-every-kind.mjs'

const request = JSON.parse(readFileSync(process.argv[2], 'utf8'))

let result
if (request.op === 'read') {
  const m = SessionManager.open(request.file)
  result = {
    header: m.getHeader(),
    entries: m.getEntries(),
    leafId: m.getLeafId(),
    tree: flatTree(m.getTree()),
    context: m.buildSessionContext(),
    contexts: {},
  }
  for (const leaf of request.leaves ?? []) {
    if (leaf === null) m.resetLeaf()
    else m.branch(leaf)
    result.contexts[String(leaf)] = m.buildSessionContext()
  }
} else if (request.op === 'list') {
  // The agent's session list for a cwd: what its resume picker shows.
  result = { sessions: (await SessionManager.list(request.cwd)).map((s) => ({ id: s.id, path: s.path })) }
} else if (request.op === 'write') {
  const m = SessionManager.create(request.cwd, request.dir)
  result = await writeEveryKind(m, request.image)
  result.file = m.getSessionFile()
} else {
  throw new Error(`unknown op ${request.op}`)
}
process.stdout.write(JSON.stringify(result) + '\n')
