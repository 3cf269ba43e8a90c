/**
 * `docker/smoke.sh`: the image's start command, parsed from the Dockerfile, run outside Docker
 * from a fresh build. It must pass for the real Dockerfile and fail for broken ones.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { freePort, ROOT } from '../cli/helpers.js'

const SMOKE = join(ROOT, 'docker', 'smoke.sh')
const temp = mkdtempSync(join(tmpdir(), 'ss-smoke-test-'))
afterAll(() => rmSync(temp, { recursive: true, force: true }))

async function smoke (env: Record<string, string>): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const child = spawn('bash', [SMOKE], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const [code] = await once(child, 'close') as [number | null]
  return { code, stdout, stderr }
}

/** A Dockerfile whose final stage runs `cmd` (exec form unless a string is given). */
function dockerfile (cmd: string[] | string): string {
  const path = join(temp, `Dockerfile.${Math.random().toString(36).slice(2)}`)
  const form = typeof cmd === 'string' ? cmd : JSON.stringify(cmd)
  writeFileSync(path, 'FROM node:20-slim\nENV HOST=127.0.0.1 PORT=8787 DATA_DIR=/data\n' +
    `HEALTHCHECK CMD ["node", "-e", "process.exit(0)"]\nENTRYPOINT ["node"]\nCMD ${form}\n`)
  return path
}

describe('docker/smoke.sh', () => {
  it('passes for docker/Dockerfile: build, /readyz 200, HEALTHCHECK, SIGTERM → exit 0', { timeout: 120_000 }, async () => {
    const res = await smoke({ SMOKE_PORT: String(await freePort()) })
    expect(res.stderr).not.toContain('FAIL')
    expect(res.code).toBe(0)
    expect(res.stdout).toContain("smoke: starting 'node dist/src/cli/main.js serve' with NODE_ENV=production HOST=0.0.0.0 UV_THREADPOOL_SIZE=64 DATA_DIR=")
    expect(res.stdout).toContain('smoke: GET /readyz answered 200\n')
    expect(res.stdout).toContain('smoke: HEALTHCHECK command passed\n')
    expect(res.stdout).toContain("smoke: created a token in AUTH_TOKENS_FILE with 'node dist/src/cli/main.js token create'\n")
    expect(res.stdout).toMatch(/ AUTH_TOKENS_FILE=\S+\/data\/tokens\.json\n/)
    expect(res.stdout).toContain('smoke: GET /v1/sessions answered 401 without a token and 200 with it\n')
    expect(res.stdout).not.toContain('sst_')
    expect(res.stdout).toMatch(/smoke: ok \(SIGTERM -> exit 0, lock released\)\n$/)
  })

  it('left a build whose CLI entry has its shebang and runs', async () => {
    const built = join(ROOT, 'dist', 'src', 'cli', 'main.js')
    expect(existsSync(built)).toBe(true)
    expect(readFileSync(built, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node')
    const child = spawn(process.execPath, [built, 'serve', '--help'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
    const [code] = await once(child, 'close') as [number | null]
    expect(code).toBe(0)
    expect(stdout).toMatch(/^Usage: session-store serve/)
  })

  it('left a build that imports production dependencies only (the image installs no others)', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
    const files = readdirSync(join(ROOT, 'dist'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js'))
    expect(files).toContain(join('src', 'server.js'))
    const packages = new Set<string>()
    for (const file of files) {
      const text = readFileSync(join(ROOT, 'dist', file), 'utf8')
      // `from '…'` only in an import or export statement, so a string such as 'from' is not taken for one.
      for (const m of text.matchAll(/(?:^(?:import|export)\b[^;()=]*?\bfrom\s*|\bimport\s*\(\s*|^import\s+)'([^'.][^']*)'/gm)) {
        const spec = m[1]!
        if (spec.startsWith('node:') || builtinModules.includes(spec)) continue
        packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!)
      }
    }
    expect(packages.size).toBeGreaterThan(0)
    expect([...packages].filter((p) => !(p in pkg.dependencies))).toEqual([])
  })

  it('fails for a shell-form CMD, which would not pass SIGTERM on', async () => {
    const res = await smoke({ SMOKE_DOCKERFILE: dockerfile('node dist/src/server.js'), SMOKE_SKIP_BUILD: '1' })
    expect(res.code).not.toBe(0)
    expect(res.stderr).toContain('CMD is not in exec form (a JSON array): node dist/src/server.js')
  })

  it('fails when the process does not exit 0 on SIGTERM', async () => {
    const server = "require('http').createServer((q, s) => s.end('ok')).listen(process.env.PORT); process.on('SIGTERM', () => process.exit(3))"
    const res = await smoke({ SMOKE_DOCKERFILE: dockerfile(['-e', server]), SMOKE_SKIP_BUILD: '1', SMOKE_PORT: String(await freePort()) })
    expect(res.code).not.toBe(0)
    expect(res.stdout).toContain('smoke: GET /readyz answered 200')
    expect(res.stderr).toContain('smoke: FAIL: exit code after SIGTERM was 3, expected 0')
  })

  it('fails when /readyz never answers because the process exits', async () => {
    const res = await smoke({ SMOKE_DOCKERFILE: dockerfile(['-e', 'process.exit(0)']), SMOKE_SKIP_BUILD: '1', SMOKE_PORT: String(await freePort()) })
    expect(res.code).not.toBe(0)
    expect(res.stderr).toContain('smoke: FAIL: the server exited before it was ready')
  })
})
