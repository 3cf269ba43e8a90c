/**
 * docker/Dockerfile, docker/compose.yaml, .dockerignore and the README's `## Docker` section
 * describe one image: the commands and values the README documents are the ones in the files.
 */
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { COMMANDS } from '../../src/cli/run.js'
import { ROOT } from '../cli/helpers.js'

const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8')
const README = read('README.md')
const COMPOSE = read('docker/compose.yaml')

/** The text of `## <title>` up to the next `## ` heading. */
function section (title: string): string {
  const start = README.indexOf(`\n## ${title}\n`)
  expect(start).toBeGreaterThan(-1)
  const end = README.indexOf('\n## ', start + 1)
  return README.slice(start, end === -1 ? undefined : end)
}

interface Instruction { keyword: string, args: string }

/**
 * The Dockerfile's instructions: those before the first FROM (global ARGs), then one list per
 * stage; continuation lines joined, comments dropped.
 */
function parse (): { globals: Instruction[], stages: Instruction[][] } {
  const lines = read('docker/Dockerfile').replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))
  const globals: Instruction[] = []
  const result: Instruction[][] = []
  for (const line of lines) {
    const [, keyword, args] = /^(\S+)\s+(.*)$/.exec(line) as RegExpExecArray
    if (keyword!.toUpperCase() === 'FROM') result.push([])
    const list = result.at(-1) ?? globals
    list.push({ keyword: keyword!.toUpperCase(), args: args!.replace(/\s+/g, ' ') })
  }
  return { globals, stages: result }
}

const { globals, stages } = parse()
const [build, runtime] = stages as [Instruction[], Instruction[]]
const all = (stage: Instruction[], keyword: string): string[] => stage.filter((i) => i.keyword === keyword).map((i) => i.args)
const last = (stage: Instruction[], keyword: string): string => all(stage, keyword).at(-1) as string
const env = new Map(all(runtime, 'ENV').flatMap((args) => args.split(' ').map((kv) => kv.split('=') as [string, string])))
const START = ['session-store-entrypoint', 'node', 'dist/src/cli/main.js', 'serve']

describe('docker/Dockerfile', () => {
  it('has a build stage and a runtime stage, both on ARG NODE_IMAGE, node:20-slim unless told otherwise', () => {
    expect(stages).toHaveLength(2)
    expect(globals).toEqual([{ keyword: 'ARG', args: 'NODE_IMAGE=node:20-slim' }])
    expect(last(build, 'FROM')).toMatch(/^\$\{NODE_IMAGE\} AS build$/)
    expect(last(runtime, 'FROM')).toMatch(/^\$\{NODE_IMAGE\} AS runtime$/)
  })

  it('compiles the native addon in the build stage, which alone has python3, make and g++', () => {
    expect(all(build, 'RUN')[0]).toMatch(/^apt-get update && apt-get install -y --no-install-recommends python3 make g\+\+ && rm -rf \/var\/lib\/apt\/lists\/\*$/)
    expect(all(runtime, 'RUN').join('\n')).not.toMatch(/apt-get|npm|g\+\+|make|python/)
    expect(all(runtime, 'RUN')).toEqual(['mkdir -p /data && chown node:node /data'])
  })

  it('installs every dependency with npm ci, builds, then prunes to the production ones, which the runtime copies', () => {
    const runs = all(build, 'RUN')
    expect(runs.filter((r) => /\bnpm ci\b/.test(r))).toHaveLength(1)
    expect(runs.find((r) => /\bnpm ci\b/.test(r))).toMatch(/npm_config_nodedir=\/usr\/local npm ci --no-audit --no-fund --no-update-notifier$/)
    expect(runs.at(-1)).toMatch(/^npm run build && npm prune --omit=dev --no-audit --no-fund && /)
    expect(all(runtime, 'COPY')).toEqual(expect.arrayContaining(['--from=build /app/node_modules ./node_modules', '--from=build /app/dist ./dist']))
  })

  it('takes the registry as a build argument of the build stage alone, and the CA as a secret of npm ci alone', () => {
    expect(all(build, 'ARG')).toEqual(['NPM_CONFIG_REGISTRY=https://registry.npmjs.org/'])
    expect(all(runtime, 'ARG')).toEqual([])
    const withSecret = all(build, 'RUN').filter((r) => r.includes('type=secret'))
    expect(withSecret).toHaveLength(1)
    expect(withSecret[0]).toMatch(/^--mount=type=secret,id=npm_ca if \[ -s \/run\/secrets\/npm_ca \]; then export NPM_CONFIG_CAFILE=\/run\/secrets\/npm_ca; fi && .*npm ci /)
    for (const stage of stages) expect(all(stage, 'ENV').join(' ')).not.toMatch(/npm_config|npm_ca/i)
  })

  it('runs as a non-root user with DATA_DIR=/data as a volume, HOST=0.0.0.0 and the exposed port', () => {
    expect(last(runtime, 'USER')).toBe('node')
    expect(env.get('DATA_DIR')).toBe('/data')
    expect(last(runtime, 'VOLUME')).toBe('/data')
    expect(env.get('HOST')).toBe('0.0.0.0')
    expect(last(runtime, 'EXPOSE')).toBe(env.get('PORT'))
    expect(env.get('PORT')).toBe('8787')
  })

  it('requires tokens: AUTH_TOKENS_FILE lies in the DATA_DIR volume, and nothing opts out of authentication', () => {
    expect(env.get('AUTH_TOKENS_FILE')).toBe(`${env.get('DATA_DIR')}/tokens.json`)
    expect(env.has('ALLOW_UNAUTHENTICATED')).toBe(false)
  })

  it('checks its health with node against /readyz, in exec form', () => {
    const health = last(runtime, 'HEALTHCHECK')
    const command = JSON.parse(/CMD (.*)$/.exec(health)![1]!) as string[]
    expect(command.slice(0, 2)).toEqual(['node', '-e'])
    expect(command[2]).toContain("fetch('http://127.0.0.1:'+(process.env.PORT||8787)+'/readyz')")
  })

  it('starts in exec form through docker/entrypoint.sh, with the command the README names', () => {
    const start = [...JSON.parse(last(runtime, 'ENTRYPOINT')), ...JSON.parse(last(runtime, 'CMD'))] as string[]
    expect(start).toEqual(START)
    expect(all(runtime, 'COPY')).toContain('docker/entrypoint.sh /usr/local/bin/session-store-entrypoint')
    expect(statSync(join(ROOT, 'docker', 'entrypoint.sh')).mode & 0o111).toBe(0o111)
    const documented = /The start command is\s+`([^`]+)`/.exec(section('Docker'))?.[1]
    expect(documented).toBe(START.join(' '))
  })
})

describe('README ## Docker', () => {
  const docker = section('Docker')
  const block = /```sh\n([\s\S]*?)```/.exec(docker)?.[1] ?? ''

  it('documents the build and compose commands, and they name the files that exist', () => {
    expect(block.split('\n').slice(0, 2)).toEqual([
      'docker build -f docker/Dockerfile -t session-store .',
      'docker compose -f docker/compose.yaml up',
    ])
    expect(existsSync(join(ROOT, 'docker', 'Dockerfile'))).toBe(true)
    expect(existsSync(join(ROOT, 'docker', 'compose.yaml'))).toBe(true)
  })

  it('the compose file builds the same Dockerfile from the same context, under the same tag', () => {
    const context = /^\s+context: (\S+)$/m.exec(COMPOSE)?.[1] as string
    expect(resolve(ROOT, 'docker', context)).toBe(ROOT) // `docker build … .` from the root
    expect(COMPOSE).toMatch(/^\s+dockerfile: docker\/Dockerfile$/m)
    expect(COMPOSE).toMatch(/^\s+image: session-store$/m)
  })

  it('the compose file publishes the image\'s port on 127.0.0.1 only and keeps /data in a named volume', () => {
    expect(COMPOSE).toMatch(new RegExp(`^\\s+- "127\\.0\\.0\\.1:8787:${env.get('PORT')}"$`, 'm'))
    expect(COMPOSE).toMatch(new RegExp(`^\\s+- session-store-data:${env.get('DATA_DIR')}$`, 'm'))
    expect(COMPOSE).toMatch(/^volumes:\n {2}session-store-data:$/m)
    expect(docker).toContain('`127.0.0.1:8787`')
    expect(docker).toContain('`session-store-data`')
  })

  it('the compose file serves open for local use only, and README says how to require tokens', () => {
    expect(COMPOSE).toMatch(/^\s+environment:\n\s+AUTH_TOKENS_FILE: ""\n\s+ALLOW_UNAUTHENTICATED: "1"$/m)
    expect(COMPOSE).not.toMatch(/^\s+- "(0\.0\.0\.0:)?8787:/m)
    const create = 'docker compose -f docker/compose.yaml run --rm session-store token create --tenant default --scopes admin'
    expect(COMPOSE).toContain(create)
    expect(docker).toContain(create)
    for (const word of ['`AUTH_TOKENS_FILE=/data/tokens.json`', '`ALLOW_UNAUTHENTICATED=1`', 'SIGHUP']) expect(docker).toContain(word)
  })

  it('.dockerignore keeps node_modules and dist out but nothing the Dockerfile copies', () => {
    const ignored = read('.dockerignore').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.git']))
    const copied = [...all(build, 'COPY'), ...all(runtime, 'COPY')]
      .filter((args) => !args.startsWith('--from'))
      .flatMap((args) => args.split(' ').slice(0, -1))
    expect(copied).toEqual(expect.arrayContaining(['package.json', 'package-lock.json', 'src', 'routes']))
    for (const path of copied) {
      expect(ignored).not.toContain(path)
      expect(existsSync(join(ROOT, path))).toBe(true)
    }
  })
})

describe('README ## CLI', () => {
  it('lists every command of the CLI', () => {
    const cli = section('CLI')
    for (const command of COMMANDS) expect(cli).toMatch(new RegExp(`^\\| \`${command.name}[ \`]`, 'm'))
  })
})
