/** Progress of long runs: an updating line on a TTY stderr, plain lines otherwise. */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Reporter } from '../../src/cli/progress.js'
import { runCli } from '../../src/cli/run.js'
import { FIXTURES, memoryIo } from './helpers.js'

const ERASE = '\r\x1b[2K'

describe('Reporter', () => {
  it('on a TTY, redraws one status line on stderr and prints results above it', () => {
    const { io, stdout, stderr } = memoryIo({}, '/', true)
    const report = new Reporter(io.stdout, io.stderr)
    report.progress(0, 2, 'migrating a.jsonl')
    report.line('migrated a.jsonl')
    report.progress(1, 2, 'migrating b.jsonl')
    report.done()
    expect(stdout()).toBe('migrated a.jsonl\n')
    expect(stderr()).toBe(`${ERASE}[0/2] migrating a.jsonl${ERASE}[0/2] migrating a.jsonl${ERASE}[1/2] migrating b.jsonl${ERASE}`)
  })

  it('cuts the status line to the terminal width', () => {
    const { io, stderr } = memoryIo({}, '/', true) // 60 columns
    new Reporter(io.stdout, io.stderr).progress(3, 9, 'x'.repeat(200))
    const line = stderr().slice(ERASE.length)
    expect(line).toHaveLength(59)
    expect(line.endsWith('…')).toBe(true)
  })

  it('without a TTY, draws no progress: only the plain lines', () => {
    const { io, stdout, stderr } = memoryIo()
    const report = new Reporter(io.stdout, io.stderr)
    report.progress(0, 1, 'importing a.jsonl')
    report.line('imported a.jsonl')
    report.error('b.jsonl: broken')
    report.done()
    expect(stdout()).toBe('imported a.jsonl\n')
    expect(stderr()).toBe('session-store: b.jsonl: broken\n')
  })
})

describe('migrate on a terminal', () => {
  let dataDir: string
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }))

  it('shows [n/total] progress on stderr and ends with the line cleared', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'ss-cli-tty-'))
    mkdirSync(join(dataDir, 'sessions', '--x--'), { recursive: true })
    copyFileSync(join(FIXTURES, 'pi-v1-large-session.jsonl'), join(dataDir, 'sessions', '--x--', 'a.jsonl'))
    const { io, stdout, stderr } = memoryIo({}, dataDir, true)
    expect(await runCli(['migrate', '.'], io)).toBe(0)
    expect(stderr()).toContain(`${ERASE}[0/1] reading sessions/--x--/a.jsonl`)
    expect(stderr().endsWith(ERASE)).toBe(true)
    expect(stdout()).toMatch(/^would migrate sessions\/--x--\/a\.jsonl: /)
  })
})
