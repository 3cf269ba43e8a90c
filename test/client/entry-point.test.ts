/**
 * The client entry point: what it loads at run time (undici and Node built-ins, never Fastify
 * or the server), and the package `exports` that name it.
 */
import { readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')

/** Specifiers of the value imports and re-exports of a module (`import type` and `export type` are erased). */
function valueImports (source: string): string[] {
  const out: string[] = []
  for (const match of source.matchAll(/^(?:import|export)\s+(?!type\b)[^;'"]*?from\s+'([^']+)'/gm)) out.push(match[1]!)
  for (const match of source.matchAll(/^import\s+'([^']+)'/gm)) out.push(match[1]!)
  return out
}

/** Every module loaded at run time from `entry`: files below ROOT and bare packages. */
function runtimeGraph (entry: string): { files: string[], packages: string[] } {
  const files = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string): void => {
    if (files.has(file)) return
    files.add(file)
    for (const spec of valueImports(readFileSync(file, 'utf8'))) {
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec.replace(/\.js$/, '.ts')))
      else packages.add(spec)
    }
  }
  visit(entry)
  return { files: [...files].map((f) => relative(ROOT, f)).sort(), packages: [...packages].sort() }
}

describe('client entry point', () => {
  it('loads only the client, the pure tree helpers, undici and Node built-ins at run time', () => {
    const { files, packages } = runtimeGraph(join(ROOT, 'src', 'client', 'index.ts'))
    expect(files.filter((f) => !f.startsWith('src/client/'))).toEqual(['src/session/guards.ts', 'src/session/tree.ts'])
    expect(packages.filter((p) => !p.startsWith('node:'))).toEqual(['undici'])
  })

  it('finds value imports but not type-only ones', () => {
    const source = "import type { A } from './a.js'\nimport { b, type C } from './b.js'\nexport type { D } from './d.js'\nexport { e } from './e.js'\n"
    expect(valueImports(source)).toEqual(['./b.js', './e.js'])
  })

  it('is the package export `./client` (and `.`), with types', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports?: Record<string, unknown> }
    const entry = { types: './dist/src/client/index.d.ts', default: './dist/src/client/index.js' }
    expect(pkg.exports?.['./client']).toEqual(entry)
    expect(pkg.exports?.['.']).toEqual(entry)
  })
})
