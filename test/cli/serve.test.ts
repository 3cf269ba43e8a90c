/**
 * `session-store serve` in a child process: every API.md "Running" option as a flag, flags win
 * over the environment, and the server stops cleanly on SIGTERM.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { startCli, waitUntil, type CliRun } from './helpers.js'

/** The address of the `session-store listening` log line, once it appeared. */
async function listening (run: CliRun): Promise<{ address: string, dataDir: string, storage: string }> {
  let found: { address: string, dataDir: string, storage: string } | undefined
  await waitUntil(() => {
    if (run.child.exitCode !== null) throw new Error(`serve exited: ${run.stderr()}`)
    for (const line of run.stdout().split('\n')) {
      if (line.includes('"session-store listening"')) found = JSON.parse(line)
    }
    return found !== undefined
  }, 'the listening log line')
  return found as { address: string, dataDir: string, storage: string }
}

describe('session-store serve', () => {
  let flagDir: string
  let envDir: string
  const runs: CliRun[] = []
  beforeEach(() => {
    flagDir = mkdtempSync(join(tmpdir(), 'ss-serve-flag-'))
    envDir = mkdtempSync(join(tmpdir(), 'ss-serve-env-'))
  })
  afterEach(() => {
    for (const run of runs.splice(0)) if (run.child.exitCode === null) run.child.kill('SIGKILL')
    rmSync(flagDir, { recursive: true, force: true })
    rmSync(envDir, { recursive: true, force: true })
  })

  it('takes every option as a flag, flags winning over the environment, and exits 0 on SIGTERM', async () => {
    const run = startCli(
      ['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', flagDir, '--storage', 'disk', '--log-level', 'info', '--body-limit', '2000'],
      { env: { PORT: '1', HOST: '0.0.0.0', DATA_DIR: envDir, STORAGE: 'memory', LOG_LEVEL: 'silent', BODY_LIMIT: '67108864' } },
    )
    runs.push(run)
    const started = await listening(run) // LOG_LEVEL=silent would have hidden this line
    expect(started.address).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(started.address).not.toMatch(/:1$/)
    expect(started).toMatchObject({ dataDir: flagDir, storage: 'disk' })
    expect(existsSync(join(flagDir, '.lock'))).toBe(true)
    expect(existsSync(join(envDir, '.lock'))).toBe(false)

    const health = await request(`${started.address}/healthz`)
    expect(await health.body.json()).toEqual({ status: 'ok' })
    const big = await request(`${started.address}/v1/sessions`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cwd: '/x', title: 'x'.repeat(3000) }),
    })
    await big.body.dump()
    expect(big.statusCode).toBe(413)
    const small = await request(`${started.address}/v1/sessions`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cwd: '/x' }),
    })
    await small.body.dump()
    expect(small.statusCode).toBe(201)

    run.child.kill('SIGTERM')
    expect(await run.exited).toBe(0)
    expect(run.stdout()).toContain('"session-store stopped"')
    expect(existsSync(join(flagDir, '.lock'))).toBe(false)
  })

  it('reads the environment when no flag is given', async () => {
    const run = startCli(['serve'], { env: { PORT: '0', HOST: '127.0.0.1', DATA_DIR: envDir, STORAGE: 'disk', LOG_LEVEL: 'info' } })
    runs.push(run)
    expect(await listening(run)).toMatchObject({ dataDir: envDir, storage: 'disk' })
    expect(existsSync(join(envDir, '.lock'))).toBe(true)
    run.child.kill('SIGINT')
    expect(await run.exited).toBe(0)
  })

  it('--storage memory takes no DATA_DIR lock', async () => {
    const run = startCli(['serve', '--storage', 'memory', '--port', '0'], { env: { DATA_DIR: envDir, STORAGE: 'disk', LOG_LEVEL: 'info' } })
    runs.push(run)
    expect(await listening(run)).toMatchObject({ storage: 'memory' })
    expect(existsSync(join(envDir, '.lock'))).toBe(false)
    run.child.kill('SIGTERM')
    expect(await run.exited).toBe(0)
  })

  it('refuses a DATA_DIR another server owns: exit 1 and session-store: <message>', async () => {
    const first = startCli(['serve', '--port', '0', '--data-dir', flagDir], { env: { LOG_LEVEL: 'info' } })
    runs.push(first)
    await listening(first)
    const second = startCli(['serve', '--port', '0', '--data-dir', flagDir], { env: { LOG_LEVEL: 'info' } })
    runs.push(second)
    expect(await second.exited).toBe(1)
    expect(second.stderr()).toMatch(new RegExp(`^session-store: DATA_DIR ${flagDir} is in use by process ${first.child.pid}`))
    first.child.kill('SIGTERM')
    expect(await first.exited).toBe(0)
  })
})
