/** Help and usage errors of every command: help exits 0, a wrong invocation exits 2. */
import { describe, expect, it } from 'vitest'
import { COMMANDS, runCli } from '../../src/cli/run.js'
import { cli, memoryIo } from './helpers.js'

async function run (args: string[], env: Record<string, string> = {}): Promise<{ code: number | 'serving', stdout: string, stderr: string }> {
  const { io, stdout, stderr } = memoryIo(env)
  const code = await runCli(args, io)
  return { code, stdout: stdout(), stderr: stderr() }
}

describe('session-store --help', () => {
  it('lists every command', async () => {
    const { code, stdout } = await run(['--help'])
    expect(code).toBe(0)
    expect(stdout).toMatch(/^Usage: session-store <command>/)
    for (const name of ['serve', 'import', 'export', 'migrate', 'tail']) expect(stdout).toMatch(new RegExp(`^  ${name} `, 'm'))
  })

  it.each(COMMANDS.map((c) => c.name))('%s --help and help %s print the command\'s usage', async (name) => {
    const flag = await run([name, '--help'])
    expect(flag.code).toBe(0)
    expect(flag.stdout).toMatch(new RegExp(`^Usage: session-store ${name}\\b`))
    const word = await run(['help', name])
    expect(word).toEqual(flag)
  })

  it('serve --help names every variable of API.md "Running" with its flag', async () => {
    const { stdout } = await run(['serve', '--help'])
    for (const [flag, variable] of [['port', 'PORT'], ['host', 'HOST'], ['data-dir', 'DATA_DIR'], ['storage', 'STORAGE'], ['log-level', 'LOG_LEVEL'], ['body-limit', 'BODY_LIMIT']]) {
      expect(stdout).toMatch(new RegExp(`--${flag} .*${variable}`))
    }
  })
})

describe('usage errors exit 2 with session-store: <message>', () => {
  it.each([
    [[], 'missing command'],
    [['frobnicate'], "unknown command 'frobnicate'"],
    [['help', 'frobnicate'], "unknown command 'frobnicate'"],
    [['import', 'a.jsonl', '--bogus'], "Unknown option '--bogus'"],
    [['import', '--server', 'http://127.0.0.1:1'], 'import: missing argument'],
    [['import', 'a.jsonl'], 'missing --server <url> or --data-dir <dir>'],
    [['import', 'a.jsonl', '--server', 'http://x', '--data-dir', 'd'], 'either --server or --data-dir, not both'],
    [['import', 'a.jsonl', '--server', 'ftp://x'], "--server: expected an http(s) URL, got 'ftp://x'"],
    [['import', 'a.jsonl', '--server', 'not a url'], "--server: not a URL: 'not a url'"],
    [['export', 'a', 'b', '--data-dir', 'd'], "export: unexpected argument 'b'"],
    [['export', '--data-dir', 'd'], 'export: missing argument'],
    [['migrate'], 'migrate: missing argument'],
    [['migrate', 'd', '--apply=yes'], "Option '--apply' does not take an argument"],
    [['migrate', '--from', 'd'], 'migrate: --to <DATA_DIR or DATABASE_URL> is missing'],
    [['migrate', '--to', 'postgres://x/db'], 'migrate: --from <DATA_DIR or DATABASE_URL> is missing'],
    [['migrate', 'd', '--from', 'a', '--to', 'b'], 'migrate: give either <DATA_DIR> or --from and --to, not both'],
    [['migrate', '--from', 'a', '--to', 'b', '--apply'], 'migrate: --apply is for upgrading a DATA_DIR in place'],
    [['migrate', '--from', 'a', '--to', './a'], 'migrate: --from and --to name the same store'],
    [['migrate', 'd', '--merge'], 'migrate: --merge goes with --from and --to'],
    [['tail', 'x'], 'tail: missing --server <url>'],
    [['tail', 'x', '--server', 'http://x', '--after', 'abc'], "--after: expected a non-negative integer, got 'abc'"],
    [['serve', 'extra'], "Unexpected argument 'extra'"],
    [['serve', '--port', 'abc'], "--port: expected an integer from 0 to 65535, got 'abc'"],
    [['serve', '--storage', 'tape'], "--storage: expected 'disk', 'memory' or 'postgres', got 'tape'"],
    [['serve', '--log-level', 'loud'], '--log-level: expected one of'],
    [['serve', '--body-limit', '0'], '--body-limit: expected an integer from 1'],
  ])('%j', async (args, message) => {
    const { code, stdout, stderr } = await run(args)
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toMatch(/^session-store: /)
    expect(stderr).toContain(message)
  })

  it('an invalid environment variable (not a flag) is a failure, exit 1, named as the variable', async () => {
    const { code, stderr } = await run(['serve'], { PORT: 'abc' })
    expect(code).toBe(1)
    expect(stderr).toBe("session-store: PORT: expected an integer from 0 to 65535, got 'abc'\n")
  })
})

describe('the executable', () => {
  it('exits with the command\'s code: 0 for help, 2 for a usage error', async () => {
    const help = await cli(['--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Usage: session-store <command>')
    const bad = await cli(['frobnicate'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("session-store: unknown command 'frobnicate'")
  })
})
