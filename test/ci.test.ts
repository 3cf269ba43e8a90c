/**
 * What `.ci/run` does: install from the lock file, typecheck every TypeScript file of the
 * repository (`tsc --noEmit` over tsconfig.json), lint it, and only then run the tests; then
 * build the image with podman and smoke-test it.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..')
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8')

describe('.ci/run', () => {
  it('runs npm ci, then the typecheck, then the linter, then the tests, and stops at the first failure', () => {
    const lines = read('.ci/run').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))
    expect(lines).toContain('set -euo pipefail')
    const commands = lines.filter((l) => l.startsWith('npm '))
    expect(commands).toEqual(['npm ci --no-audit --no-fund', 'npm run typecheck', 'npm run lint', 'npm test'])
  })

  it('then builds the image with podman and smoke-tests it and the compose profile, failing where podman cannot run', () => {
    const run = read('.ci/run')
    const lines = run.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))
    const at = (line: string): number => {
      expect(lines).toContain(line)
      return lines.indexOf(line)
    }
    const steps = ['npm test', 'bash docker/stand-in-base.sh localhost/node-stand-in:20-slim', 'bash docker/build.sh session-store',
      'bash docker/smoke.sh session-store', 'bash docker/compose-smoke.sh'].map(at)
    expect([...steps].sort((a, b) => a - b)).toEqual(steps)
    // podman that cannot run is an error, never a skipped step.
    expect(run).toMatch(/if ! podman_usable; then\n\s+echo "ERROR: podman cannot run on this machine[^\n]*\n\s+exit 1\nfi/)
    expect(run).toContain('PACKAGES=(chromium podman buildah runc mmdebstrap podman-compose)')
    expect(run).toMatch(/apt-get install -y "\$\{MISSING\[@\]\}"/)
  })

  it('lints the whole repository with ESLint (neostandard), generated files aside', () => {
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> }
    expect(pkg.scripts.lint).toBe('eslint .')
    const config = read('eslint.config.js')
    expect(config).toContain("import neostandard from 'neostandard'")
    expect(config).toContain("'test/contract/openapi-types.d.ts'")
  })

  it('typechecks src, routes, test, bench and scripts without emitting', () => {
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> }
    expect(pkg.scripts.typecheck).toBe('tsc -p tsconfig.json --noEmit')
    const tsconfig = JSON.parse(read('tsconfig.json')) as { include: string[], compilerOptions: { strict?: boolean } }
    expect([...tsconfig.include].sort()).toEqual(['bench', 'routes', 'scripts', 'src', 'test'])
    expect(tsconfig.compilerOptions.strict).toBe(true)
  })
})
