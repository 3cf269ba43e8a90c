// A long-lived agent for the sync suite: pi's SessionManager under Node, oh-my-pi's under Bun
// (run beside its install, test/setup/omp-reader.ts). Reads one JSON command per line on stdin,
// performs it with the agent's own SessionManager writing its own files, and answers one JSON
// line: the ids it wrote, the session file, and what the agent itself sees in that file now
// (opened afresh, as a restart would): header, entries, leaf, tree and context.
import { createInterface } from 'node:readline'
import { flatTree } from './tree.mjs'

const bun = typeof Bun !== 'undefined'
const { SessionManager } = bun
  ? await import('@oh-my-pi/pi-coding-agent/session/session-manager')
  : await import('@mariozechner/pi-coding-agent')
const { FileSessionStorage } = bun ? await import('@oh-my-pi/pi-coding-agent/session/session-storage') : {}
const storage = () => (bun ? new FileSessionStorage() : undefined)

const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }
const assistant = (content, extra = {}) => ({ role: 'assistant', content, api: 'openai-responses', provider: 'openai', model: 'gpt-4o', usage, stopReason: 'stop', timestamp: Date.now(), ...extra })
const text = (t) => ({ type: 'text', text: t })
const user = (content) => ({ role: 'user', content, timestamp: Date.now() })

let m
const ids = {}

const steps = {
  create (cmd) {
    m = SessionManager.create(cmd.cwd, undefined, storage())
    ids.user1 = m.appendMessage(user([text('What is in this picture?'), { type: 'image', data: cmd.image, mimeType: 'image/png' }]))
    ids.reply1 = m.appendMessage(assistant([text('A test pattern.')]))
  },
  tool (cmd) {
    ids.call = m.appendMessage(assistant([{ type: 'toolCall', id: 'call_1', name: 'screenshot', arguments: {} }], { stopReason: 'toolUse' }))
    ids.result = m.appendMessage({ role: 'toolResult', toolCallId: 'call_1', toolName: 'screenshot', content: [text('taken'), { type: 'image', data: cmd.image, mimeType: 'image/png' }], isError: false, timestamp: Date.now() })
    ids.reply2 = m.appendMessage(assistant([text('The screenshot shows it too.')]))
  },
  branch () {
    m.branch(ids.reply1)
    ids.branchUser = m.appendMessage(user('Try another way.'))
    ids.branchReply = m.appendMessage(assistant([text('Another way it is.')]))
  },
  compaction () {
    ids.compaction = bun
      ? m.appendCompaction('Looked at pictures.', 'Pictures', ids.branchUser, 1234)
      : m.appendCompaction('Looked at pictures.', ids.branchUser, 1234)
    ids.afterCompaction = m.appendMessage(user('And now?'))
    ids.afterCompactionReply = m.appendMessage(assistant([text('Now we go on.')]))
  },
  label () {
    ids.label = m.appendLabelChange(ids.reply1, 'checkpoint')
  },
  async title (cmd) {
    if (bun) await m.setSessionName(cmd.title, 'user')
    else ids.info = m.appendSessionInfo(cmd.title)
  },
  fork () {
    ids.forkedFrom = m.getSessionId()
    m.createBranchedSession(ids.afterCompactionReply)
    ids.forkUser = m.appendMessage(user('Continuing in the fork.'))
    ids.forkReply = m.appendMessage(assistant([text('Forked.')]))
  },
}

async function view () {
  const file = m.getSessionFile()
  const fresh = bun ? await SessionManager.open(file, undefined, storage()) : SessionManager.open(file)
  const out = { header: fresh.getHeader(), entries: fresh.getEntries(), leafId: fresh.getLeafId(), tree: flatTree(fresh.getTree()), context: fresh.buildSessionContext(), contexts: {} }
  if (bun) await fresh.close()
  return out
}

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === '') continue
  const cmd = JSON.parse(line)
  try {
    await steps[cmd.op](cmd)
    if (typeof m.flush === 'function') await m.flush()
    process.stdout.write(JSON.stringify({ ok: true, id: m.getSessionId(), file: m.getSessionFile(), ids, view: await view() }) + '\n')
  } catch (err) {
    process.stdout.write(JSON.stringify({ ok: false, error: String(err?.stack ?? err) }) + '\n')
  }
}
if (m !== undefined && typeof m.close === 'function') await m.close()
