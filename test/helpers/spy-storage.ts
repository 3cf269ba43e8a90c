/**
 * Wraps a SessionStorage so a test sees every call the session model makes, in order, and can
 * make any of them fail.
 */
import { basename } from 'node:path'
import type { SessionStorage, SessionStorageWriter } from '../../src/storage/types.js'

export interface SpyStorage {
  storage: SessionStorage
  /** `op:basename` in call order, e.g. `writeLine:x.jsonl`, `fsync:x.jsonl`, `rename:a->b`. */
  ops: string[]
  /** `op:basename` of each writer call once the wrapped storage has finished it, in that order. */
  ended: string[]
  /** Return an error to make the call fail before it reaches the wrapped storage. */
  fail?: (op: string, path: string) => Error | undefined
  /** Return a promise to hold a writer call (after it is recorded in `ops`) until it settles. */
  hold?: (op: string, path: string) => Promise<void> | undefined
}

const WRITER_OPS = ['writeLine', 'flush', 'fsync', 'close'] as const

export function spyStorage (inner: SessionStorage): SpyStorage {
  const spy: SpyStorage = { storage: undefined as unknown as SessionStorage, ops: [], ended: [] }
  const check = (op: string, path: string): void => {
    const err = spy.fail?.(op, path)
    if (err !== undefined) throw err
  }
  spy.storage = new Proxy(inner, {
    get (target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown
      if (typeof value !== 'function') return value
      const fn = value as (...args: unknown[]) => unknown
      if (prop === 'openWriter') {
        return (path: string, opts: Parameters<SessionStorage['openWriter']>[1]) => {
          spy.ops.push(`openWriter:${opts.flags}:${basename(path)}`)
          return wrapWriter(fn.call(receiver, path, opts) as SessionStorageWriter, path)
        }
      }
      return (...args: unknown[]) => {
        const name = String(prop)
        if (['rename', 'syncDir', 'unlink', 'writeText', 'writeTextSync'].includes(name)) {
          const path = String(args[args.length > 1 && name === 'rename' ? 1 : 0])
          spy.ops.push(name === 'rename' ? `rename:${basename(String(args[0]))}->${basename(path)}` : `${name}:${basename(path)}`)
          try { check(name, path) } catch (err) { return name.endsWith('Sync') ? (() => { throw err })() : Promise.reject(err) }
        }
        return fn.apply(receiver, args)
      }
    },
  })
  function wrapWriter (writer: SessionStorageWriter, path: string): SessionStorageWriter {
    const wrapped = { ...writer } as SessionStorageWriter
    for (const op of WRITER_OPS) {
      (wrapped as unknown as Record<string, unknown>)[op] = async (...args: unknown[]) => {
        spy.ops.push(`${op}:${basename(path)}`)
        check(op, path)
        await spy.hold?.(op, path)
        const result = await (writer[op] as (...a: unknown[]) => Promise<void>).apply(writer, args)
        spy.ended.push(`${op}:${basename(path)}`)
        return result
      }
    }
    wrapped.getError = () => writer.getError()
    return wrapped
  }
  return spy
}
