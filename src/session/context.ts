/**
 * `buildSessionContext`: what the model receives for a leaf (SPEC.md §7). Pure; the walk is
 * iterative and the whole function is linear in the path length.
 */
import { isNonEmptyString, isObject } from './guards.js'
import { buildIndex, pathFrom, type EntryIndex } from './tree.js'
import type { AgentMessage, SessionContext, SessionEntryBase } from './types.js'

/**
 * A new empty context: `{messages: [], thinkingLevel: "off", models: {}, injectedTtsrRules: [],
 * mode: "none"}` (no `modeData` key).
 * @see SPEC.md §7.1
 */
export function emptyContext (): SessionContext {
  return { messages: [], thinkingLevel: 'off', models: {}, injectedTtsrRules: [], mode: 'none' }
}

/**
 * Rebuilds the context for `leafId`: `null` → empty; an id in `byId` → that entry; otherwise
 * (undefined or unknown) the last element of `entries`. `byId` defaults to `buildIndex(entries)`;
 * `walk` finds the path root → leaf (default `pathFrom` over `byId`; the manager walks its parent
 * positions). `message` entries contribute their `message` object itself (not a copy).
 * @see SPEC.md §7.2, §7.3, §7.4
 */
export function buildSessionContext (
  entries: readonly SessionEntryBase[],
  leafId?: string | null,
  byId?: EntryIndex,
  walk?: (leaf: SessionEntryBase) => SessionEntryBase[]
): SessionContext {
  if (leafId === null) return emptyContext()
  const index = byId ?? buildIndex(entries)
  const leaf = (typeof leafId === 'string' ? index.get(leafId) : undefined) ?? entries[entries.length - 1]
  if (leaf === undefined) return emptyContext()
  const path = walk === undefined ? pathFrom(index, leaf) : walk(leaf)
  const { context, compactionAt } = collectState(path)
  const emit = (entry: SessionEntryBase): void => {
    const message = toMessage(entry)
    if (message !== undefined) context.messages.push(message)
  }
  if (compactionAt < 0) {
    for (const entry of path) emit(entry)
    return context
  }
  const compaction = path[compactionAt]!
  const payload = remotePayload(compaction)
  context.messages.push(compactionSummary(compaction, payload))
  if (payload === undefined) {
    let keeping = false
    for (let i = 0; i < compactionAt; i++) {
      const entry = path[i]!
      if (!keeping && entry.id === compaction.firstKeptEntryId) keeping = true
      if (keeping) emit(entry)
    }
  }
  for (let i = compactionAt + 1; i < path.length; i++) emit(path[i]!)
  return context
}

/** Running state of §7.2 step 3. */
interface PathState {
  context: SessionContext
  rules: Set<string>
  /** A `model_change` with a non-empty model and role `"default"` (or no role) was seen. */
  explicitDefault: boolean
  /** The last assistant message with a provider and a model (its `provider/model` is read once, at the end). */
  assistantModel: Record<string, unknown> | undefined
  /** Index of the last compaction on the path, -1 if none. */
  compactionAt: number
}

/** State over the whole path (§7.2 step 3), including entries hidden by a compaction. */
function collectState (path: readonly SessionEntryBase[]): { context: SessionContext, compactionAt: number } {
  const state: PathState = {
    context: emptyContext(), rules: new Set(), explicitDefault: false, assistantModel: undefined, compactionAt: -1,
  }
  for (let i = 0; i < path.length; i++) applyEntry(state, path[i]!, i)
  const { context, rules, explicitDefault, assistantModel, compactionAt } = state
  if (!explicitDefault && assistantModel !== undefined) context.models.default = `${assistantModel.provider as string}/${assistantModel.model as string}`
  context.injectedTtsrRules = [...rules]
  return { context, compactionAt }
}

/** One entry's effect on the state; types not listed leave it alone. */
function applyEntry (state: PathState, e: SessionEntryBase, i: number): void {
  const { context } = state
  switch (e.type) {
    case 'thinking_level_change':
      context.thinkingLevel = typeof e.thinkingLevel === 'string' ? e.thinkingLevel : 'off'
      break
    case 'model_change':
      if (isNonEmptyString(e.model)) {
        const role = typeof e.role === 'string' ? e.role : 'default'
        context.models[role] = e.model
        if (role === 'default') state.explicitDefault = true
      }
      break
    case 'message':
      if (hasAssistantModel(e.message)) state.assistantModel = e.message
      break
    case 'ttsr_injection':
      if (Array.isArray(e.injectedRules)) {
        for (const rule of e.injectedRules) if (typeof rule === 'string') state.rules.add(rule)
      }
      break
    case 'mode_change':
      context.mode = typeof e.mode === 'string' ? e.mode : 'none'
      if (isObject(e.data)) context.modeData = e.data
      else delete context.modeData
      break
    case 'compaction':
      state.compactionAt = i
      break
    case 'service_tier_change': {
      const tier = coerceServiceTier(e.serviceTier)
      if (tier === undefined) delete context.serviceTier
      else context.serviceTier = tier
      break
    }
  }
}

const SERVICE_TIERS: ReadonlySet<string> = new Set(['auto', 'default', 'flex', 'scale', 'priority'])
const TIER_FAMILIES = ['openai', 'anthropic', 'google'] as const
/** The readers' tier names: what each one means per provider family. */
const NAMED_TIERS: Readonly<Record<string, Record<string, string>>> = {
  priority: { openai: 'priority', anthropic: 'priority', google: 'priority' },
  'openai-only': { openai: 'priority' },
  'claude-only': { anthropic: 'priority' },
  auto: { openai: 'auto' },
  default: { openai: 'default' },
  flex: { openai: 'flex' },
  scale: { openai: 'scale' },
}

/**
 * A `service_tier_change` value as the agents read it: a tier name becomes its per-family
 * object, an object keeps its known families with known tiers, anything else (and `null`)
 * means no tier.
 */
export function coerceServiceTier (value: unknown): Record<string, string> | undefined {
  if (typeof value === 'string') {
    return Object.hasOwn(NAMED_TIERS, value) ? { ...NAMED_TIERS[value] } : undefined
  }
  if (!isObject(value)) return undefined
  const out: Record<string, string> = {}
  for (const family of TIER_FAMILIES) {
    const tier = value[family]
    if (typeof tier === 'string' && SERVICE_TIERS.has(tier)) out[family] = tier
  }
  return Object.keys(out).length > 0 ? out : undefined
}

/** An assistant message carrying `provider` and `model` as non-empty strings. */
function hasAssistantModel (message: unknown): message is Record<string, unknown> {
  return isObject(message) && message.role === 'assistant' && isNonEmptyString(message.provider) && isNonEmptyString(message.model)
}

/** `ts(e)`: `Date.parse(e.timestamp)`, NaN when unparseable or not a string. @see SPEC.md §7.3 */
function ts (entry: SessionEntryBase): number {
  return typeof entry.timestamp === 'string' ? Date.parse(entry.timestamp) : NaN
}

/** Copies `value` under `key` unless it is undefined (absent keys stay absent). */
function setDefined (target: Record<string, unknown>, key: string, value: unknown): void {
  if (value !== undefined) target[key] = value
}

/** `emit(entry)` of §7.2 step 4; undefined when the entry contributes nothing. */
function toMessage (e: SessionEntryBase): AgentMessage | undefined {
  switch (e.type) {
    case 'message':
      return isObject(e.message) ? e.message as AgentMessage : undefined
    case 'custom_message': {
      const m: Record<string, unknown> = { role: 'custom' }
      setDefined(m, 'customType', e.customType)
      setDefined(m, 'content', e.content)
      setDefined(m, 'display', e.display)
      setDefined(m, 'details', e.details)
      setDefined(m, 'attribution', e.attribution)
      m.timestamp = ts(e)
      return m as AgentMessage
    }
    case 'branch_summary': {
      if (!isNonEmptyString(e.summary)) return undefined
      const m: Record<string, unknown> = { role: 'branchSummary', summary: e.summary }
      setDefined(m, 'fromId', e.fromId)
      m.timestamp = ts(e)
      return m as AgentMessage
    }
    default:
      return undefined
  }
}

/**
 * The remote-compaction payload when `preserveData.openaiRemoteCompaction` is an object with a
 * non-empty string `provider` and an array `replacementHistory`.
 * @see SPEC.md §7.2 step 6.3
 */
function remotePayload (c: SessionEntryBase): Record<string, unknown> | undefined {
  const remote = isObject(c.preserveData) ? c.preserveData.openaiRemoteCompaction : undefined
  if (!isObject(remote) || !isNonEmptyString(remote.provider) || !Array.isArray(remote.replacementHistory)) {
    return undefined
  }
  return { type: 'openaiResponsesHistory', provider: remote.provider, items: remote.replacementHistory }
}

/** The compaction summary message of §7.3. */
function compactionSummary (c: SessionEntryBase, providerPayload: unknown): AgentMessage {
  const m: Record<string, unknown> = { role: 'compactionSummary' }
  setDefined(m, 'summary', c.summary)
  setDefined(m, 'shortSummary', c.shortSummary)
  setDefined(m, 'tokensBefore', c.tokensBefore)
  setDefined(m, 'providerPayload', providerPayload)
  m.timestamp = ts(c)
  return m as AgentMessage
}
