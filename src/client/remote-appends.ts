/**
 * The typed `append*` methods of `SessionManager` (SPEC.md §6.4) over one generic append, with
 * the same parameters as the local manager; each resolves to the new entry's id.
 */
import type { AgentMessage, NewEntry } from './types.js'

export abstract class RemoteAppends {
  /** Appends one entry under the session's current leaf; resolves to its id. */
  abstract appendEntry (entry: NewEntry): Promise<string>

  async appendMessage (message: AgentMessage): Promise<string> {
    return await this.appendEntry({ type: 'message', message })
  }

  /** `thinkingLevel` omitted is stored as `null` ("off"). */
  async appendThinkingLevelChange (thinkingLevel?: string | null): Promise<string> {
    return await this.appendEntry({ type: 'thinking_level_change', thinkingLevel: thinkingLevel ?? null })
  }

  /** `model` is `provider/modelId`; `role` omitted is read as `default`. */
  async appendModelChange (model: string, role?: string): Promise<string> {
    return await this.appendEntry({ type: 'model_change', model, role })
  }

  async appendCompaction (summary: string, shortSummary: string | undefined, firstKeptEntryId: string | undefined,
    tokensBefore: number, details?: unknown, fromExtension?: boolean, preserveData?: Record<string, unknown>): Promise<string> {
    return await this.appendEntry({
      type: 'compaction', summary, shortSummary, firstKeptEntryId, tokensBefore, details, preserveData, fromExtension,
    })
  }

  async appendCustomEntry (customType: string, data?: unknown): Promise<string> {
    return await this.appendEntry({ type: 'custom', customType, data })
  }

  async appendCustomMessageEntry (customType: string, content: string | unknown[], display: boolean, details?: unknown,
    attribution: 'user' | 'agent' = 'agent'): Promise<string> {
    return await this.appendEntry({ type: 'custom_message', customType, content, display, details, attribution })
  }

  /** A non-empty `label` sets the target's label; `undefined` or `''` clears it. */
  async appendLabelChange (targetId: string, label?: string): Promise<string> {
    return await this.appendEntry({ type: 'label', targetId, label })
  }

  async appendTtsrInjection (ruleNames: string[]): Promise<string> {
    return await this.appendEntry({ type: 'ttsr_injection', injectedRules: ruleNames })
  }

  async appendSessionInit (init: { systemPrompt: string, task: string, tools: string[], outputSchema?: unknown }): Promise<string> {
    return await this.appendEntry({ type: 'session_init', ...init })
  }

  async appendModeChange (mode: string, data?: Record<string, unknown>): Promise<string> {
    return await this.appendEntry({ type: 'mode_change', mode, data })
  }
}
