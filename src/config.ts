/**
 * Server configuration from the environment (API.md "Running"). Every value is checked once at
 * start-up; an invalid one fails with `SS_INVALID_CONFIG` naming the variable.
 * An empty variable counts as unset.
 */
import { resolve } from 'node:path'
import { InvalidConfig } from './errors.js'
import type { StorageKind } from './storage/index.js'

export type { StorageKind }
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

export interface Config {
  /** TCP port; 0 lets the OS choose (the chosen one is logged). */
  port: number
  host: string
  /** Absolute path of the data root (SPEC.md §2.1). */
  dataDir: string
  storage: StorageKind
  logLevel: LogLevel
  /** Largest request body in bytes. */
  bodyLimit: number
  /** Most sessions the registry keeps loaded at once. */
  maxOpenSessions: number
}

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

type Env = Record<string, string | undefined>

function read (env: Env, name: string): string | undefined {
  const value = env[name]?.trim()
  return value === undefined || value === '' ? undefined : value
}

function integer (env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = read(env, name)
  if (raw === undefined) return fallback
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidConfig(name, `expected an integer from ${min} to ${max}, got '${raw}'`)
  }
  return value
}

function storageKind (env: Env): StorageKind {
  const raw = read(env, 'STORAGE') ?? 'disk'
  if (raw === 'disk' || raw === 'memory') return raw
  if (raw === 'postgres') {
    throw new InvalidConfig('STORAGE', "'postgres' is not available yet; use 'disk' or 'memory'")
  }
  throw new InvalidConfig('STORAGE', `expected 'disk' or 'memory', got '${raw}'`)
}

function logLevel (env: Env): LogLevel {
  const raw = read(env, 'LOG_LEVEL') ?? 'info'
  const level = LOG_LEVELS.find((l) => l === raw)
  if (level === undefined) {
    throw new InvalidConfig('LOG_LEVEL', `expected one of ${LOG_LEVELS.join(', ')}, got '${raw}'`)
  }
  return level
}

/**
 * Reads the configuration. `cwd` is what a relative `DATA_DIR` resolves against.
 * @throws InvalidConfig (`SS_INVALID_CONFIG`) naming the first invalid variable.
 */
export function loadConfig (env: Env = process.env, cwd: string = process.cwd()): Config {
  return {
    port: integer(env, 'PORT', 8787, 0, 65535),
    host: read(env, 'HOST') ?? '127.0.0.1',
    dataDir: resolve(cwd, read(env, 'DATA_DIR') ?? './data'),
    storage: storageKind(env),
    logLevel: logLevel(env),
    bodyLimit: integer(env, 'BODY_LIMIT', 67_108_864, 1, Number.MAX_SAFE_INTEGER),
    maxOpenSessions: integer(env, 'MAX_OPEN_SESSIONS', 1000, 1, 1_000_000),
  }
}
