/**
 * The test run's one build (test/setup/build.ts): every source file of src/ and routes/ is
 * compiled, and the tests that start the real CLI and server run that build
 * with plain node, not the TypeScript source.
 */
import { existsSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, inject, it } from 'vitest'
import { startCli } from '../cli/helpers.js'
import { builtCli, builtServer } from '../helpers/build.js'

const ROOT = join(import.meta.dirname, '..', '..')

const sources = (dir: string): string[] => readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')).map((f) => join(dir, f))

describe('the build the tests run', () => {
  it('is outside dist/ and holds every source file of src/ and routes/ compiled', () => {
    const dir = inject('buildDir')
    expect(relative(ROOT, dir)).toBe(join('node_modules', '.cache', 'session-store-test'))
    const files = [...sources('src'), ...sources('routes')]
    expect(files).toContain(join('src', 'cli', 'main.ts'))
    // Incremental: tsc compiles a file again when its content changed (not on a mere touch).
    expect(files.filter((ts) => !existsSync(join(dir, ts.replace(/\.ts$/, '.js'))))).toEqual([])
    expect(builtServer()).toBe(join(dir, 'src', 'server.js'))
  })

  it('is what the CLI tests start, with plain node', async () => {
    const run = startCli(['--help'])
    expect(run.child.spawnargs).toEqual([process.execPath, builtCli(), '--help'])
    expect(await run.exited).toBe(0)
    expect(run.stdout()).toMatch(/^Usage: session-store/)
  })
})
