/**
 * docker/Dockerfile, docker/compose.yaml, .dockerignore and the README's `## Docker` section
 * describe one image: the commands and values the README documents are the ones in the files.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
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

/** The Dockerfile's instructions per stage, continuation lines joined, comments dropped. */
function stages (): Instruction[][] {
  const lines = read('docker/Dockerfile').replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))
  const result: Instruction[][] = []
  for (const line of lines) {
    const [, keyword, args] = /^(\S+)\s+(.*)$/.exec(line) as RegExpExecArray
    if (keyword!.toUpperCase() === 'FROM') result.push([])
    result.at(-1)!.push({ keyword: keyword!.toUpperCase(), args: args!.replace(/\s+/g, ' ') })
  }
  return result
}

const [build, runtime] = stages() as [Instruction[], Instruction[]]
const all = (stage: Instruction[], keyword: string): string[] => stage.filter((i) => i.keyword === keyword).map((i) => i.args)
const last = (stage: Instruction[], keyword: string): string => all(stage, keyword).at(-1) as string
const env = new Map(all(runtime, 'ENV').flatMap((args) => args.split(' ').map((kv) => kv.split('=') as [string, string])))

describe('docker/Dockerfile', () => {
  it('has a build stage and a runtime stage, both on node:20-slim', () => {
    expect(stages()).toHaveLength(2)
    expect(last(build, 'FROM')).toBe('node:20-slim AS build')
    expect(last(runtime, 'FROM')).toBe('node:20-slim AS runtime')
  })

  it('builds with npm ci + npm run build; the runtime installs production dependencies only', () => {
    expect(all(build, 'RUN')).toEqual(['npm ci', 'npm run build'])
    expect(all(runtime, 'RUN')).toContain('npm ci --omit=dev && npm cache clean --force')
    expect(all(runtime, 'RUN').join('\n')).not.toMatch(/npm ci(?! --omit=dev)|npm run build|npm install/)
    expect(all(runtime, 'COPY')).toContain('--from=build /app/dist ./dist')
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

  it('starts in exec form, so SIGTERM reaches node, with the command the README and smoke.sh name', () => {
    const start = [...JSON.parse(last(runtime, 'ENTRYPOINT')), ...JSON.parse(last(runtime, 'CMD'))] as string[]
    expect(start).toEqual(['node', 'dist/src/cli/main.js', 'serve'])
    const documented = /The start command is\s+`([^`]+)`/.exec(section('Docker'))?.[1]
    expect(documented).toBe(start.join(' '))
    const parsed = spawnSync('bash', [join(ROOT, 'docker', 'smoke.sh'), '--print-command'], { encoding: 'utf8' })
    expect(parsed.status).toBe(0)
    expect(parsed.stdout).toBe(start.join(' ') + '\n')
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
