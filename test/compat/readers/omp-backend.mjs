// Runs under Bun, beside the @oh-my-pi/pi-coding-agent install (test/setup/omp-reader.ts).
// Drives oh-my-pi's own SessionManager over session-store's HttpSessionStorageBackend (the
// compiled `session-store/omp`, whose path the request names) and prints one JSON line: the ids
// it wrote and what the agent sees in the session. PI_CODING_AGENT_DIR is set by the caller.
import { readFileSync } from 'node:fs'
import { IndexedSessionStorage } from '@oh-my-pi/pi-coding-agent/session/indexed-session-storage'
import { SessionManager } from '@oh-my-pi/pi-coding-agent/session/session-manager'
import { flatTree } from './tree.mjs'
import { writeEveryKind } from './write-every-kind.mjs'

const request = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const { HttpSessionStorageBackend } = await import(request.backend)
const agentDir = process.env.PI_CODING_AGENT_DIR
const storage = new IndexedSessionStorage(new HttpSessionStorageBackend({
  server: request.server, sessionsDir: `${agentDir}/sessions`, blobsDir: `${agentDir}/blobs`,
}))
await storage.initialize()

async function settle () {
  await storage.drain()
  await new Promise((resolve) => setTimeout(resolve, 0))
}

function view (m) {
  return { id: m.getSessionId(), file: m.getSessionFile(), entries: m.getEntries(), leafId: m.getLeafId(), tree: flatTree(m.getTree()), context: m.buildSessionContext() }
}

function assistant (text) {
  return {
    role: 'assistant',
    content: [{ type: 'text', text }],
    api: 'openai-responses',
    provider: 'openai',
    model: 'gpt-4o',
    usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: 'stop',
    timestamp: Date.now(),
  }
}

let result
if (request.op === 'write') {
  const m = SessionManager.create(request.cwd, undefined, storage)
  // IndexedSessionStorage publishes each write after the call returns; the agent's turns leave it
  // that time, and so does this script (storage.drain, then the confirmation's callbacks).
  const { ids } = await writeEveryKind(m, request.image, settle)
  await m.setSessionName('Shared through the server')
  await m.flush()
  result = { ids, ...view(m) }
  await m.close()
} else if (request.op === 'continue') {
  const m = await SessionManager.continueRecent(request.cwd, undefined, storage)
  const ids = { user: m.appendMessage({ role: 'user', content: request.text, timestamp: Date.now() }) }
  await settle()
  ids.reply = m.appendMessage(assistant(`Answering: ${request.text}`))
  await settle()
  await m.flush()
  result = { ids, ...view(m) }
  await m.close()
} else if (request.op === 'read') {
  const m = await SessionManager.open(request.file, undefined, storage)
  result = view(m)
  await m.close()
} else {
  throw new Error(`unknown op ${request.op}`)
}
await storage.drain()
process.stdout.write(JSON.stringify(result) + '\n')
