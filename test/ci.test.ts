/**
 * What `.ci/run` does: install from the lock file, typecheck every TypeScript file of the
 * repository (`tsc --noEmit` over tsconfig.json), lint it, and only then run the tests.
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
