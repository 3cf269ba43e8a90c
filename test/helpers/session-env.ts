/**
 * A fresh DATA_DIR per test, with the file storage, a blob store and a log that records every
 * line, plus helpers to read what is on disk.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FileBlobStore } from '../../src/blobs/file-blob-store.js'
import type { Logger } from '../../src/session/logger.js'
import type { ManagerOptions } from '../../src/session/session-factories.js'
import { FileSessionStorage } from '../../src/storage/file-session-storage.js'
import type { SessionStorage } from '../../src/storage/types.js'

export const FIXTURES = join(import.meta.dirname, '..', 'fixtures')

export interface LogLine { level: 'info' | 'warn' | 'error', obj: Record<string, unknown>, msg: string }

export interface SessionEnv {
  dataDir: string
  storage: SessionStorage
  options: ManagerOptions
  logs: LogLine[]
  /** Copies a fixture into `DATA_DIR/sessions/<dir>/` and returns its new path. */
  fixture(name: string, dir?: string): string
  /** Lines of a file as parsed JSON objects. */
  readJsonl(path: string): Array<Record<string, unknown>>
  /** Every file below DATA_DIR, relative paths, sorted. */
  files(): string[]
  cleanup(): void
}

export function recordingLogger (logs: LogLine[]): Logger {
  const at = (level: LogLine['level']) => (obj: object, msg: string) => { logs.push({ level, obj: obj as Record<string, unknown>, msg }) }
  return { info: at('info'), warn: at('warn'), error: at('error') }
}

export function makeSessionEnv (storage: SessionStorage = new FileSessionStorage()): SessionEnv {
  const dataDir = mkdtempSync(join(tmpdir(), 'ss-model-'))
  const logs: LogLine[] = []
  const options: ManagerOptions = { dataDir, blobs: new FileBlobStore(join(dataDir, 'blobs')), logger: recordingLogger(logs) }
  return {
    dataDir,
    storage,
    options,
    logs,
    fixture (name, dir = '--fixtures--') {
      const target = join(dataDir, 'sessions', dir)
      mkdirSync(target, { recursive: true })
      const path = join(target, name)
      copyFileSync(join(FIXTURES, name), path)
      return path
    },
    readJsonl (path) {
      return readFileSync(path, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>)
    },
    files () {
      return (readdirSync(dataDir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
        .filter((d) => d.isFile())
        .map((d) => join(d.parentPath, d.name).slice(dataDir.length + 1))
        .sort()
    },
    cleanup () { rmSync(dataDir, { recursive: true, force: true }) },
  }
}

/** A minimal assistant message from `provider/model`. */
export function assistant (text = 'ok', provider = 'anthropic', model = 'claude-test'): Record<string, unknown> & { role: string } {
  return { role: 'assistant', content: [{ type: 'text', text }], provider, model, usage: { input: 1, output: 1 }, stopReason: 'stop', timestamp: Date.now() }
}

export function user (text = 'hi'): Record<string, unknown> & { role: string } {
  return { role: 'user', content: text, timestamp: Date.now() }
}
