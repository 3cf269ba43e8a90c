/**
 * The `postgres` profile of docker/compose.yaml, read as YAML: a database, two server replicas
 * on it and an nginx load balancer in front of both, with health checks and SSE-friendly proxying,
 * while a plain `up` still starts only the single disk-backed server. Checked without a
 * Docker engine: the files must say what the README says.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { ROOT } from '../cli/helpers.js'

interface Service {
  image?: string
  profiles?: string[]
  build?: { context: string, dockerfile: string }
  environment?: Record<string, string>
  ports?: string[]
  volumes?: string[]
  depends_on?: Record<string, { condition: string }>
  healthcheck?: { test: string[] }
}

const COMPOSE = parse(readFileSync(join(ROOT, 'docker', 'compose.yaml'), 'utf8')) as { services: Record<string, Service>, volumes: Record<string, unknown> }
const services = COMPOSE.services
const NGINX = readFileSync(join(ROOT, 'docker', 'nginx.conf'), 'utf8')
const README = readFileSync(join(ROOT, 'README.md'), 'utf8')
const REPLICAS = ['session-store-pg-1', 'session-store-pg-2']

/** nginx directives as `name args` lines, comments dropped. */
const directives = NGINX.split('\n').map((l) => l.replace(/#.*/, '').trim()).filter((l) => l.endsWith(';')).map((l) => l.slice(0, -1).replace(/\s+/g, ' '))

describe('docker/compose.yaml profile postgres', () => {
  it('a plain `up` still starts only the single server: every other service is in the postgres profile', () => {
    expect(services['session-store']?.profiles).toBeUndefined()
    expect(services['session-store']?.environment?.STORAGE).toBeUndefined()
    for (const name of Object.keys(services).filter((n) => n !== 'session-store')) expect(services[name]?.profiles).toEqual(['postgres'])
    expect(Object.keys(services).sort()).toEqual(['db', 'lb', 'session-store', ...REPLICAS].sort())
  })

  it('the database keeps its data in a named volume and reports health with pg_isready', () => {
    const db = services.db!
    expect(db.image).toMatch(/^\$\{POSTGRES_IMAGE:-postgres:\d+-alpine\}$/)
    expect(db.volumes).toEqual(['session-store-pg:/var/lib/postgresql/data'])
    expect(Object.keys(COMPOSE.volumes)).toContain('session-store-pg')
    expect(db.healthcheck?.test.slice(0, 2)).toEqual(['CMD', 'pg_isready'])
  })

  it('two replicas, the same image, use STORAGE=postgres on that one database, start once it is healthy, and are not published', () => {
    const db = services.db!.environment!
    const url = `postgres://${db.POSTGRES_USER}:${db.POSTGRES_PASSWORD}@db:5432/${db.POSTGRES_DB}`
    for (const name of REPLICAS) {
      const replica = services[name]!
      expect(replica.image).toBe(services['session-store']!.image)
      expect(resolve(ROOT, 'docker', replica.build!.context)).toBe(ROOT)
      expect(replica.build!.dockerfile).toBe('docker/Dockerfile')
      expect(replica.environment).toMatchObject({ STORAGE: 'postgres', DATABASE_URL: url })
      expect(replica.depends_on).toEqual({ db: { condition: 'service_healthy' } })
      expect(replica.ports).toBeUndefined()
    }
  })

  it('one nginx port, on 127.0.0.1 only, in front of both replicas once they are healthy', () => {
    const lb = services.lb!
    expect(lb.image).toMatch(/^\$\{NGINX_IMAGE:-nginx:[\d.]+-alpine\}$/)
    expect(lb.ports).toEqual(['127.0.0.1:8788:8080'])
    expect(lb.volumes).toEqual(['./nginx.conf:/etc/nginx/conf.d/default.conf:ro'])
    expect(existsSync(join(ROOT, 'docker', 'nginx.conf'))).toBe(true)
    expect(lb.depends_on).toEqual(Object.fromEntries(REPLICAS.map((r) => [r, { condition: 'service_healthy' }])))
    expect(lb.healthcheck?.test).toContain('http://127.0.0.1:8080/readyz')
    expect(directives).toContain('listen 8080')
    for (const name of REPLICAS) expect(directives.some((d) => d.startsWith(`server ${name}:8787`))).toBe(true)
    expect(directives).toContain('proxy_pass http://session_store')
  })

  it('nginx passes SSE through: no buffering either way, HTTP/1.1 upstream, an hour of quiet allowed, POST never replayed', () => {
    for (const d of ['proxy_buffering off', 'proxy_request_buffering off', 'proxy_cache off', 'proxy_http_version 1.1',
      'proxy_set_header Connection ""', 'proxy_read_timeout 1h', 'client_max_body_size 0']) expect(directives).toContain(d)
    expect(directives.find((d) => d.startsWith('proxy_next_upstream '))).not.toContain('non_idempotent')
  })

  it('nginx gives up connecting to a replica that is gone within seconds and tries the other one', () => {
    const timeout = directives.find((d) => d.startsWith('proxy_connect_timeout '))
    expect(timeout).toMatch(/^proxy_connect_timeout [1-5]s$/)
    expect(directives.find((d) => d.startsWith('proxy_next_upstream '))?.split(' ')).toEqual(expect.arrayContaining(['error', 'timeout']))
  })

  it('POSTGRES_IMAGE and NGINX_IMAGE name stand-ins, which docker/stand-in/ builds from Debian packages', () => {
    for (const name of ['postgres', 'nginx']) {
      const file = readFileSync(join(ROOT, 'docker', 'stand-in', `${name}.Containerfile`), 'utf8')
      expect(file).toMatch(/^ARG BASE=debian:bookworm-slim\nFROM \$\{BASE\}$/m)
      expect(file).toMatch(new RegExp(`apt-get install -y --no-install-recommends ${name === 'postgres' ? 'postgresql-15' : 'nginx wget'}`))
    }
    expect(readFileSync(join(ROOT, 'docker', 'compose-smoke.sh'), 'utf8')).toContain('up -d lb')
  })

  it('the README documents both ways to run it', () => {
    const docker = README.slice(README.indexOf('\n## Docker\n'))
    expect(docker).toContain('docker compose -f docker/compose.yaml up\n')
    expect(docker).toContain('docker compose -f docker/compose.yaml --profile postgres up -d lb')
    expect(docker).toContain('`127.0.0.1:8788`')
  })
})
