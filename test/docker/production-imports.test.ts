/**
 * The image's runtime stage holds the production dependencies only (docker/Dockerfile prunes the
 * rest): the compiled server, the same `tsconfig.build.json` output as the image's `dist/`,
 * must import nothing else.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { join } from 'node:path'
import { describe, expect, inject, it } from 'vitest'
import { ROOT } from '../cli/helpers.js'

describe('the compiled server', () => {
  it('imports production dependencies only (the image has no others)', () => {
    const dir = inject('buildDir')
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js'))
    expect(files).toContain(join('src', 'server.js'))
    const packages = new Set<string>()
    for (const file of files) {
      const text = readFileSync(join(dir, file), 'utf8')
      // `from '…'` only in an import or export statement, so a string such as 'from' is not taken for one.
      for (const m of text.matchAll(/(?:^(?:import|export)\b[^;()=]*?\bfrom\s*|\bimport\s*\(\s*|^import\s+)'([^'.][^']*)'/gm)) {
        const spec = m[1]!
        if (spec.startsWith('node:') || builtinModules.includes(spec)) continue
        packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!)
      }
    }
    expect(packages).toContain('fastify')
    expect([...packages].filter((p) => !(p in pkg.dependencies))).toEqual([])
  })
})
