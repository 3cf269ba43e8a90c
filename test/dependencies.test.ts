/** docs/dependencies.md records exactly the versions package-lock.json installs. */
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { currentDependencies, DEPENDENCIES_DOC, renderDependencies } from '../scripts/dependencies.js'

describe('docs/dependencies.md', () => {
  it('matches package.json and package-lock.json (regenerate with npm run deps:doc)', async () => {
    expect(await readFile(DEPENDENCIES_DOC, 'utf8')).toBe(await currentDependencies())
  })

  it('lists every direct dependency with its locked version, and every installed package', () => {
    const text = renderDependencies(
      { engines: { node: '>=20' }, dependencies: { fastify: '^5.0.0' }, devDependencies: { vitest: '^4.0.0' } },
      {
        lockfileVersion: 3,
        packages: {
          '': {},
          'node_modules/fastify': { version: '5.1.0', license: 'MIT' },
          'node_modules/vitest': { version: '4.0.1', license: 'MIT', dev: true },
          'node_modules/vitest/node_modules/@s/pkg': { version: '1.0.0', dev: true, optional: true },
        },
      })
    expect(text).toContain('| `fastify` | `^5.0.0` | 5.1.0 | MIT | service |')
    expect(text).toContain('| `vitest` | `^4.0.0` | 4.0.1 | MIT | development |')
    expect(text).toContain('| `@s/pkg` | 1.0.0 | unknown | development (optional) |')
    expect(text).toContain('## Every installed package (3)')
  })
})
