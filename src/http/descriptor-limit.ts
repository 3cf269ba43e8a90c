/**
 * The process's file descriptor limit, and the connection caps it allows. Every socket holds a
 * descriptor, and so does every session file, blob and database connection the requests on those
 * sockets use: a connection cap above the limit only moves the failure to `accept` (EMFILE), where
 * the kernel then refuses every client alike, health probes included.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

/**
 * Descriptors kept out of the connection budget: the process's own (standard streams, the event
 * loop, the listening socket, the log: about 20 at rest), the DATA_DIR lock, the indexes, the
 * PostgreSQL pool (10 connections) and room for what start-up and shutdown open.
 */
export const RESERVED_DESCRIPTORS = 64

/** The soft `RLIMIT_NOFILE` from `/proc/<pid>/limits` text; undefined for `unlimited` or unreadable text. */
export function parseDescriptorLimit (limits: string): number | undefined {
  const soft = /^Max open files\s+(\S+)/m.exec(limits)?.[1]
  const value = soft === undefined ? Number.NaN : Number(soft)
  return Number.isSafeInteger(value) && value > 0 ? value : undefined
}

/**
 * The soft descriptor limit of this process, read once at start: from `/proc/self/limits`, else
 * (no procfs) from `ulimit -n` in a shell, which inherits it. Undefined when neither says.
 */
export function readDescriptorLimit (): number | undefined {
  try {
    return parseDescriptorLimit(readFileSync('/proc/self/limits', 'utf8'))
  } catch {
    const shell = spawnSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8', timeout: 5000 })
    const value = Number(shell.stdout?.trim())
    return Number.isSafeInteger(value) && value > 0 ? value : undefined
  }
}

/** Connection caps in force; 0 = no cap. */
export interface ConnectionCaps {
  /** Open sockets in total. */
  total: number
  /** Open sockets from one client address. */
  perClient: number
}

/**
 * The caps in force for the configured ones (0 = none) under `descriptorLimit` (undefined:
 * unknown, the configured caps alone). The total never exceeds half of the descriptors left after
 * `RESERVED_DESCRIPTORS`: each connection may hold one more descriptor for the file its request
 * works on. One client address never holds more than half of that total, so that a second
 * address (a health probe, another tenant) finds room without waiting for anything.
 */
export function connectionCaps (configured: ConnectionCaps, descriptorLimit: number | undefined): ConnectionCaps {
  const budget = descriptorLimit === undefined ? 0 : Math.max(2, Math.floor((descriptorLimit - RESERVED_DESCRIPTORS) / 2))
  const total = budget === 0 ? configured.total : configured.total === 0 ? budget : Math.min(configured.total, budget)
  if (configured.perClient === 0 || total === 0) return { total, perClient: configured.perClient }
  return { total, perClient: Math.min(configured.perClient, Math.max(1, Math.floor(total / 2))) }
}
