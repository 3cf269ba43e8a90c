// Runs under Bun (`node_modules/.bin/bun test/compat/readers/omp-reader.mjs <request.json>`).
// Opens or writes session files with @oh-my-pi/pi-coding-agent's own SessionManager and prints
// one JSON line on stdout: what that agent sees. The agent directory (PI_CODING_AGENT_DIR) must
// be set by the caller to a copy of the data directory, so that its blob store is ours.
import { readFileSync } from 'node:fs'
import { SessionManager } from '@oh-my-pi/pi-coding-agent/session/session-manager'
import { FileSessionStorage } from '@oh-my-pi/pi-coding-agent/session/session-storage'
import { flatTree } from './tree.mjs'
import { writeEveryKind } from './write-every-kind.mjs'

const request = JSON.parse(readFileSync(process.argv[2], 'utf8'))

async function read (file, leaves) {
  const m = await SessionManager.open(file, undefined, new FileSessionStorage())
  const out = {
    header: m.getHeader(),
    entries: m.getEntries(),
    leafId: m.getLeafId(),
    tree: flatTree(m.getTree()),
    context: m.buildSessionContext(),
    contexts: {},
  }
  for (const leaf of leaves ?? []) {
    if (leaf === null) m.resetLeaf()
    else m.branch(leaf)
    out.contexts[String(leaf)] = m.buildSessionContext()
  }
  await m.close()
  return out
}

let result
if (request.op === 'read') {
  result = await read(request.file, request.leaves)
} else if (request.op === 'list') {
  // Listing a cwd is when the agent moves its old directory to its current name.
  result = { sessions: (await SessionManager.list(request.cwd)).map((s) => ({ id: s.id, path: s.path })) }
} else if (request.op === 'write') {
  // Without `dir`, the agent files the session where it files that cwd's sessions.
  const m = SessionManager.create(request.cwd, request.dir, new FileSessionStorage())
  result = await writeEveryKind(m, request.image)
  await m.flush()
  result.file = m.getSessionFile()
  await m.close()
} else {
  throw new Error(`unknown op ${request.op}`)
}
process.stdout.write(JSON.stringify(result) + '\n')
