/**
 * Fields the agents' readers dereference without a guard when they open a session file
 * (docs/compatibility.md). A file holding an entry without them cannot be opened by the agent,
 * so every new entry is checked here (a clear `message.…` problem) or completed (usage counters).
 *
 * What the readers read while indexing, listing and rebuilding the context:
 * - every usage record they sum: `usage.cost.total` and the token counters, in an assistant
 *   message's `usage`, a `model_usage` entry's `usage`, and a `task` tool result's `details.usage`
 *   (an array there counts as a record);
 * - an assistant message's `content` as an array (`.some`, `for…of`), with a string `text` in its
 *   text blocks, a string `thinking` (and a string `thinkingSignature`, when one is given) in its
 *   thinking blocks and a string `data` in its redacted thinking blocks (trimmed for a failed turn);
 * - a user message's `content`, a string or an array of blocks (both session lists walk it: a
 *   file they cannot walk silently drops out of the agent's list).
 */
import { isObject } from './guards.js'
import type { FileRecord } from './types.js'

const COUNTERS = ['input', 'output', 'cacheRead', 'cacheWrite', 'totalTokens'] as const
const COST_KEYS = ['input', 'output', 'cacheRead', 'cacheWrite', 'total'] as const

/** Why the readers could not open or list an entry holding this message, or `undefined` when they can. */
export function messageProblem (message: Record<string, unknown>): string | undefined {
  if (message.role === 'user') return blocksProblem(message.content, 'a string or an array of blocks in a user message', true)
  if (message.role === 'toolResult' && message.toolName === 'task' && isObject(message.details) && Array.isArray(message.details.usage)) {
    return 'message.details.usage must be an object in a task tool result'
  }
  if (message.role !== 'assistant') return undefined
  const problem = blocksProblem(message.content, 'an array of blocks in an assistant message', false)
  if (problem !== undefined) return problem
  for (const [i, block] of (message.content as Array<Record<string, unknown>>).entries()) {
    if (block.type === 'text' && typeof block.text !== 'string') return `message.content[${i}].text must be a string`
    if (block.type === 'thinking' && typeof block.thinking !== 'string') return `message.content[${i}].thinking must be a string`
    if (block.type === 'thinking' && block.thinkingSignature !== undefined && block.thinkingSignature !== null && typeof block.thinkingSignature !== 'string') {
      return `message.content[${i}].thinkingSignature must be a string`
    }
    if (block.type === 'redactedThinking' && typeof block.data !== 'string') return `message.content[${i}].data must be a string`
  }
  if (message.usage !== undefined && message.usage !== null && !isObject(message.usage)) return 'message.usage must be an object'
  return undefined
}

/** Why a `model_usage` entry's usage record could not be summed, or `undefined`. */
export function modelUsageProblem (entry: FileRecord): string | undefined {
  if (entry.type !== 'model_usage' || entry.usage === undefined || entry.usage === null || isObject(entry.usage)) return undefined
  return 'usage must be an object in a model_usage entry'
}

/** `content` as the readers walk it: an array of objects (or, when `text` allows, a string). */
function blocksProblem (content: unknown, what: string, text: boolean): string | undefined {
  if (text && typeof content === 'string') return undefined
  if (!Array.isArray(content)) return `message.content must be ${what}`
  for (let i = 0; i < content.length; i++) if (!isObject(content[i])) return `message.content[${i}] must be an object`
  return undefined
}

/**
 * `entry` with every usage record the readers sum completed: missing counters and cost parts
 * become 0, and an assistant message without usage gets a zeroed one. Values given are kept;
 * the input is not mutated (changed objects are copies).
 */
export function withReaderUsage (entry: FileRecord): FileRecord {
  if (entry.type === 'model_usage' && isObject(entry.usage)) return { ...entry, usage: completeUsage(entry.usage) }
  if (entry.type !== 'message' || !isObject(entry.message)) return entry
  const message = entry.message
  if (message.role === 'assistant') {
    const usage = isObject(message.usage) ? completeUsage(message.usage) : completeUsage({})
    return usage === message.usage ? entry : { ...entry, message: { ...message, usage } }
  }
  if (message.role === 'toolResult' && message.toolName === 'task' && isObject(message.details) && isObject(message.details.usage)) {
    const usage = completeUsage(message.details.usage)
    return usage === message.details.usage ? entry : { ...entry, message: { ...message, details: { ...message.details, usage } } }
  }
  return entry
}

/** `usage` itself when complete, else a copy with the missing numbers set to 0. */
function completeUsage (usage: Record<string, unknown>): Record<string, unknown> {
  const cost = isObject(usage.cost) ? usage.cost : {}
  const costComplete = isObject(usage.cost) && COST_KEYS.every((k) => typeof cost[k] === 'number')
  if (costComplete && COUNTERS.every((k) => typeof usage[k] === 'number')) return usage
  const out: Record<string, unknown> = { ...usage }
  for (const key of COUNTERS) if (typeof out[key] !== 'number') out[key] = 0
  if (!costComplete) {
    const filled: Record<string, unknown> = { ...cost }
    for (const key of COST_KEYS) if (typeof filled[key] !== 'number') filled[key] = 0
    out.cost = filled
  }
  return out
}
