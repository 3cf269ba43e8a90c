/**
 * The `session-store` executable: package.json `bin` points at `bin/session-store.js`, which
 * runs the compiled CLI when there is a build and the TypeScript source through tsx when there
 * is none (`npm ci` installs without building).
 */
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ROOT } from './helpers.js'

const SHIM = join(ROOT, 'bin', 'session-store.js')

let root: string
afterEach(() => { if (root !== undefined) rmSync(root, { recursive: true, force: true }) })

/** A package root holding a copy of the launcher, plus whatever `setup` adds. */
function fakeRoot (setup: (dir: string) => void): string {
  root = mkdtempSync(join(tmpdir(), 'ss-cli-bin-'))
  mkdirSync(join(root, 'bin'))
  copyFileSync(SHIM, join(root, 'bin', 'session-store.js'))
  writeFileSync(join(root, 'package.json'), '{"type":"module"}\n')
  setup(root)
  return root
}

function launch (dir: string, args: string[]): { status: number | null, stdout: string, stderr: string } {
  const res = spawnSync(process.execPath, [join(dir, 'bin', 'session-store.js'), ...args], { cwd: dir, encoding: 'utf8' })
  return { status: res.status, stdout: res.stdout, stderr: res.stderr }
}

describe('bin/session-store.js', () => {
  it('is package.json\'s bin, executable, with a node shebang (as is the compiled entry\'s source)', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> }
    expect(pkg.bin).toEqual({ 'session-store': 'bin/session-store.js' })
    expect(readFileSync(SHIM, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node')
    expect(statSync(SHIM).mode & 0o111).toBe(0o111)
    expect(readFileSync(join(ROOT, 'src', 'cli', 'main.ts'), 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node')
  })

  it('runs the build (dist/src/cli/main.js) when there is one', () => {
    const dir = fakeRoot((d) => {
      mkdirSync(join(d, 'dist', 'src', 'cli'), { recursive: true })
      writeFileSync(join(d, 'dist', 'src', 'cli', 'main.js'), "console.log('built:' + process.argv.slice(2).join(','))\nprocess.exitCode = 3\n")
    })
    expect(launch(dir, ['import', 'x'])).toEqual({ status: 3, stdout: 'built:import,x\n', stderr: '' })
  })

  it('without a build, runs the source through tsx, with the CLI\'s own output and exit codes', () => {
    const dir = fakeRoot((d) => {
      symlinkSync(join(ROOT, 'src'), join(d, 'src'))
      symlinkSync(join(ROOT, 'routes'), join(d, 'routes'))
      symlinkSync(join(ROOT, 'node_modules'), join(d, 'node_modules'))
    })
    const help = launch(dir, ['migrate', '--help'])
    expect(help.status).toBe(0)
    expect(help.stdout).toMatch(/^Usage: session-store migrate <DATA_DIR>/)
    const bad = launch(dir, ['frobnicate'])
    expect(bad.status).toBe(2)
    expect(bad.stderr).toContain("session-store: unknown command 'frobnicate'")
  })

  it('without a build or tsx, says how to build and exits 1', () => {
    const dir = fakeRoot((d) => { symlinkSync(join(ROOT, 'src'), join(d, 'src')) })
    const res = launch(dir, ['--help'])
    expect(res.status).toBe(1)
    expect(res.stderr).toBe("session-store: not built: run 'npm run build' (or install the dev dependencies to run from source)\n")
  })

  it('npx session-store runs it from this checkout', () => {
    const res = spawnSync('npx', ['--offline', '--no-install', 'session-store', 'tail', '--help'], { cwd: ROOT, encoding: 'utf8' })
    expect(res.stderr).not.toMatch(/ERR!/)
    expect(res.status).toBe(0)
    expect(res.stdout).toMatch(/^Usage: session-store tail <id>/)
  })
})
