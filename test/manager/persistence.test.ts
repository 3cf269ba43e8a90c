import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SessionManager } from '../../src/session/session-manager.js'
import { MemorySessionStorage } from '../../src/storage/memory-session-storage.js'
import { useManagerEnv } from '../helpers/manager-env.js'
import { assistant, user } from '../helpers/session-env.js'
import { spyStorage } from '../helpers/spy-storage.js'
import { waitUntil } from '../helpers/wait.js'

const { env, spy, create } = useManagerEnv()
const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter((l) => l !== '')

/** A manager whose session file is written and synced, with the storage calls so far forgotten, and the file's name. */
async function written (): Promise<{ m: SessionManager, name: string }> {
  const m = await create()
  m.appendMessage(assistant())
  await m.flush()
  spy.ops.length = 0
  return { m, name: m.getSessionFile()!.split('/').pop()! }
}

describe('deferral and first flush (SPEC.md §8.3)', () => {
  it('§12.62 a session with only user messages has no file after flush() and close()', async () => {
    const m = await create()
    m.appendMessage(user('a'))
    m.appendMessage(user('b'))
    await m.flush()
    await m.close()
    expect(existsSync(m.getSessionFile()!)).toBe(false)
    expect(spy.ops.filter((op) => op.startsWith('writeLine'))).toEqual([])
  })

  it('§12.63 the first assistant append writes the header and every entry of all branches once, in order', async () => {
    const m = await create()
    const a = m.appendMessage(user('a'))
    const b = m.appendMessage(user('b'))
    m.branch(a)
    const c = m.appendMessage(user('c'))
    const d = m.appendMessage(assistant())
    await m.flush()
    const written = env.readJsonl(m.getSessionFile()!)
    expect(written.map((r) => r.type)).toEqual(['session', 'message', 'message', 'message', 'message'])
    expect(written.slice(1).map((r) => r.id)).toEqual([a, b, c, d])
    expect(written[0]).toMatchObject({ type: 'session', version: 3, id: m.getSessionId(), cwd: '/work/pi' })
  })

  it('§12.64 entries appended in the same tick right after the first assistant appear exactly once', async () => {
    const m = await create()
    m.appendMessage(user())
    m.appendMessage(assistant())
    const extra = [m.appendMessage(user('x')), m.appendMessage(user('y')), m.appendCustomEntry('t')]
    const flushes = [m.flush(), m.flush()]
    m.appendMessage(assistant('z'))
    await Promise.all([...flushes, m.flush()])
    const ids = env.readJsonl(m.getSessionFile()!).slice(1).map((r) => r.id)
    expect(ids).toEqual(m.getEntries().map((e) => e.id))
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of extra) expect(ids).toContain(id)
  })

  it('§12.65 after the first flush every append adds exactly one line, in order, also with 100 concurrent appends', async () => {
    const m = await create()
    m.appendMessage(assistant())
    await m.flush()
    const before = lines(m.getSessionFile()!).length
    const appended: string[] = []
    await Promise.all(Array.from({ length: 100 }, async (_, i) => {
      await new Promise((resolve) => setImmediate(resolve))
      appended.push(m.appendMessage(user(`u${i}`)))
      await m.flush()
    }))
    const after = env.readJsonl(m.getSessionFile()!)
    expect(after.length).toBe(before + 100)
    expect(after.slice(before).map((r) => r.id)).toEqual(appended)
  })

  it('group commit: concurrent appends share writes and fsyncs', async () => {
    const { m } = await written()
    await Promise.all(Array.from({ length: 50 }, async () => {
      m.appendMessage(user())
      await m.flush()
    }))
    const fsyncs = spy.ops.filter((op) => op.startsWith('fsync')).length
    const writes = spy.ops.filter((op) => op.startsWith('writeLine')).length
    expect(writes).toBeLessThan(50)
    expect(fsyncs).toBeLessThan(50)
    expect(fsyncs).toBeGreaterThan(0)
  })
})

describe('durability (SPEC.md §8.4)', () => {
  it('a flush right after an append syncs after that write; appends joining the batch before it runs are covered too', async () => {
    const { m, name } = await written()
    const first = m.appendMessage(user('a'))
    const flushed = m.flush()
    const second = m.appendMessage(user('b'))
    await Promise.all([flushed, m.flush()])
    expect(spy.ops).toEqual([`writeLine:${name}`, `fsync:${name}`])
    expect(env.readJsonl(m.getSessionFile()!).slice(-2).map((r) => r.id)).toEqual([first, second])
  })

  it('an append after a batch started writing gets its own write and its own sync, in order', async () => {
    const { m, name } = await written()
    let release!: () => void
    const held = new Promise<void>((resolve) => { release = resolve })
    let holding = false
    spy.hold = (op) => {
      if (op !== 'writeLine' || holding) return undefined
      holding = true
      return held
    }
    const first = m.appendMessage(user('a'))
    let firstDurable = false
    const flushed = m.flush().then(() => { firstDurable = true })
    await waitUntil(() => holding, 'the first write', 5000)
    expect(firstDurable).toBe(false)
    const second = m.appendMessage(user('b'))
    const later = m.flush()
    release()
    await Promise.all([flushed, later])
    expect(firstDurable).toBe(true)
    expect(spy.ops).toEqual([`writeLine:${name}`, `fsync:${name}`, `writeLine:${name}`, `fsync:${name}`])
    expect(env.readJsonl(m.getSessionFile()!).slice(-2).map((r) => r.id)).toEqual([first, second])
  })

  it('§12.66 flush() resolves only after an fdatasync that follows the last write', async () => {
    const m = await create()
    m.appendMessage(assistant())
    m.appendMessage(user())
    const name = m.getSessionFile()!.split('/').pop()!
    // Hold the session file's fsync: flush() must still be pending while it runs.
    let release!: () => void
    const held = new Promise<void>((resolve) => { release = resolve })
    let holding = false
    spy.hold = (op, path) => {
      if (op !== 'fsync' || !path.endsWith(name)) return undefined
      holding = true
      return held
    }
    let resolved = false
    const done = m.flush().then(() => { resolved = true })
    await waitUntil(() => holding, 'the fsync of the session file', 5000)
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve))
    expect(resolved).toBe(false)
    release()
    await done
    const lastWrite = spy.ended.lastIndexOf(`writeLine:${name}`)
    const lastSync = spy.ended.lastIndexOf(`fsync:${name}`)
    expect(lastWrite).toBeGreaterThanOrEqual(0)
    // The fsync that flush() waited for started after the last write had finished.
    expect(spy.ops.lastIndexOf(`fsync:${name}`)).toBeGreaterThan(spy.ops.lastIndexOf(`writeLine:${name}`))
    expect(lastSync).toBeGreaterThan(lastWrite)
    expect(spy.ended.at(-1)).toBe(`fsync:${name}`)
  })

  it('§12.67 reopening after appends yields the same entries and the last entry as leaf', async () => {
    const m = await create()
    const a = m.appendMessage(user())
    m.appendMessage(assistant())
    m.branch(a)
    const last = m.appendMessage(user('side'))
    await m.close()
    const reopened = await SessionManager.open(m.getSessionFile()!, undefined, env.storage, env.options)
    expect(reopened.getEntries()).toEqual(m.getEntries())
    expect(reopened.getLeafId()).toBe(last)
  })
})

describe('error latching (SPEC.md §8.7)', () => {
  const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })

  it('§12.68 a failing writer latches: append throws the same error, entries unchanged, flush/close reject, logged once', async () => {
    const m = await create()
    m.appendMessage(assistant())
    await m.flush()
    const failure = enospc()
    spy.fail = (op) => op === 'writeLine' ? failure : undefined
    m.appendMessage(user('lost'))
    await expect(m.flush()).rejects.toBe(failure)
    const before = m.getEntries()
    expect(() => m.appendMessage(user('after'))).toThrow(failure)
    expect(m.getEntries()).toEqual(before)
    await expect(m.flush()).rejects.toBe(failure)
    await expect(m.close()).rejects.toBe(failure)
    await expect(m.setSessionName('x')).rejects.toBe(failure)
    await expect(m.rewriteEntries()).rejects.toBe(failure)
    await expect(m.createBranchedSession(before[0]!.id)).rejects.toBe(failure)
    const errors = env.logs.filter((l) => l.msg === 'Session persistence error.')
    expect(errors).toHaveLength(1)
    expect(errors[0]!.obj.err).toBe(failure)
    expect(errors[0]!.obj.sessionFile).toBe(m.getSessionFile())
  })

  it('§12.69 setSessionFile(samePath) clears the latch and reloads what is on disk; newSession and fork clear it too', async () => {
    const m = await create()
    m.appendMessage(assistant())
    await m.flush()
    const onDisk = m.getEntries()
    spy.fail = (op) => op === 'writeLine' ? enospc() : undefined
    m.appendMessage(user('never written'))
    await expect(m.flush()).rejects.toThrow('ENOSPC')
    spy.fail = undefined
    await m.setSessionFile(m.getSessionFile()!)
    expect(m.getLatchedError()).toBeUndefined()
    expect(m.getEntries()).toEqual(onDisk)
    m.appendMessage(user('works again'))
    await m.flush()

    spy.fail = (op) => op === 'writeLine' ? enospc() : undefined
    m.appendMessage(user())
    await expect(m.flush()).rejects.toThrow('ENOSPC')
    spy.fail = undefined
    const result = await m.fork()
    expect(result).toMatchObject({ newSessionFile: m.getSessionFile() })
    expect(m.getLatchedError()).toBeUndefined()

    spy.fail = (op) => op === 'writeLine' ? enospc() : undefined
    m.appendMessage(user())
    await expect(m.flush()).rejects.toThrow('ENOSPC')
    spy.fail = undefined
    await m.newSession()
    expect(m.getLatchedError()).toBeUndefined()
    expect(m.getEntries()).toEqual([])
  })
})

describe('moveTo failure (SPEC.md §6.3)', () => {
  it('a failed rename leaves the manager unchanged, its latched error included', async () => {
    const m = await create()
    m.appendMessage(assistant())
    await m.flush()
    const failure = Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })
    spy.fail = (op) => op === 'writeLine' ? failure : undefined
    m.appendMessage(user())
    await expect(m.flush()).rejects.toBe(failure)
    const file = m.getSessionFile()
    const exdev = Object.assign(new Error('EXDEV: cross-device'), { code: 'EXDEV' })
    spy.fail = (op) => op === 'rename' ? exdev : undefined
    await expect(m.moveTo('/elsewhere')).rejects.toBe(exdev)
    expect(m.getLatchedError()).toBe(failure)
    expect(m.getCwd()).toBe('/work/pi')
    expect(m.getSessionFile()).toBe(file)
    expect(existsSync(file!)).toBe(true)
  })
})

describe('atomic rewrite (SPEC.md §8.6)', () => {
  it('§12.70 a rewrite writes the temp file, fsyncs, closes, renames and syncs the directory, in order', async () => {
    const m = await create()
    m.appendMessage(assistant())
    await m.flush()
    spy.ops.length = 0
    await m.setSessionName('renamed')
    const name = m.getSessionFile()!.split('/').pop()!
    const ops = spy.ops.filter((op) => !op.startsWith('close:' + name) && !op.startsWith('fsync:' + name))
    const tmp = ops.find((op) => op.startsWith('openWriter:w:'))!.slice('openWriter:w:'.length)
    expect(tmp).toMatch(new RegExp(`^\\.${name.replace(/\./g, '\\.')}\\.[0-9a-f]{16}\\.tmp$`))
    const dir = dirname(m.getSessionFile()!).split('/').pop()!
    // The temp writer created its file, so its first fsync also syncs the directory (§10.3).
    expect(ops).toEqual([
      `openWriter:w:${tmp}`, `writeLine:${tmp}`, `fsync:${tmp}`, `syncDir:${dir}`, `close:${tmp}`,
      `rename:${tmp}->${name}`, `syncDir:${dir}`,
    ])
    expect(env.readJsonl(m.getSessionFile()!)[0]!.title).toBe('renamed')
  })

  for (const step of ['writeLine', 'fsync', 'close', 'rename'] as const) {
    it(`§12.70 a rewrite failing at the temp file's ${step} leaves the target byte-identical and no .tmp file`, async () => {
      const m = await create()
      m.appendMessage(assistant())
      m.appendMessage(user())
      await m.flush()
      const file = m.getSessionFile()!
      const before = readFileSync(file)
      const failure = Object.assign(new Error(`EIO: i/o error, ${step}`), { code: 'EIO' })
      let failed = 0
      spy.fail = (op, path) => {
        // The temp file's own call (rename: the call that moves the temp file over the target).
        // Only the first such call fails: a clean-up that closes the temp file again may succeed.
        if (op !== step || !(step === 'rename' || path.endsWith('.tmp')) || failed > 0) return undefined
        failed++
        return failure
      }
      await expect(m.setSessionName('never')).rejects.toMatchObject({ code: 'EIO', message: failure.message })
      expect(failed).toBe(1)
      spy.fail = undefined
      expect(readFileSync(file)).toEqual(before)
      expect(readdirSync(dirname(file)).filter((f) => f.endsWith('.tmp'))).toEqual([])
    })
  }
})

describe('in-memory managers (SPEC.md §8.1)', () => {
  it('§12.54 inMemory(): no session file and no storage write, even after assistant messages', async () => {
    const memory = spyStorage(new MemorySessionStorage())
    const m = SessionManager.inMemory('/work/pi', memory.storage)
    m.appendMessage(user())
    m.appendMessage(assistant())
    await m.setSessionName('t')
    await m.rewriteEntries()
    await m.flush()
    await m.close()
    expect(m.getSessionFile()).toBeUndefined()
    expect(m.isPersisted()).toBe(false)
    expect(memory.ops).toEqual([])
    expect(m.buildSessionContext().messages).toHaveLength(2)
  })
})
