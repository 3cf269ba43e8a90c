/**
 * The document through client generators this project does not use itself: the client that
 * `@hey-api/openapi-ts` generates from openapi/openapi.json is generated without a warning,
 * typechecks together with generated-client/round-trip.ts, and completes a round trip against a
 * real server; `@redocly/cli lint` with its recommended rules finds neither an error nor a warning
 * beyond the one finding `.redocly.lint-ignore.yaml` names (the redirect `GET /` has no 2xx answer).
 */
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { rm } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startContractServer, type ContractServer } from './contract-server.js'

const run = promisify(execFile)
const root = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url))
const GENERATED = root('test/contract/generated-client/client')
const ROUND_TRIP: string = './generated-client/round-trip.js'

/** What generated-client/round-trip.ts exports (typechecked there, against the generated client). */
type RoundTrip = (baseUrl: string, bytes: Uint8Array, hash: string) => Promise<{
  sessionId: string
  appended: unknown
  contextRoles: string[]
  blob: unknown
  fetched: Uint8Array
  exportedLines: string[]
}>

/** Runs a package's CLI with this Node, from the repository root; never throws. */
async function cli (bin: string, args: string[]): Promise<{ code: number, out: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [root(bin), ...args], {
      cwd: root(''),
      env: { ...process.env, NO_COLOR: '1', REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      maxBuffer: 16 * 1024 * 1024,
    })
    return { code: 0, out: stdout + stderr }
  } catch (err) {
    const failed = err as { code?: number, stdout?: string, stderr?: string }
    return { code: typeof failed.code === 'number' ? failed.code : 1, out: `${failed.stdout ?? ''}${failed.stderr ?? ''}` }
  }
}

describe('@hey-api/openapi-ts', () => {
  let generated: { code: number, out: string }
  beforeAll(async () => {
    await rm(GENERATED, { recursive: true, force: true })
    generated = await cli('node_modules/@hey-api/openapi-ts/bin/run.js', ['-i', './openapi/openapi.json', '-o', 'test/contract/generated-client/client'])
  }, 120_000)

  it('generates a client without a warning', () => {
    expect(generated.code, generated.out).toBe(0)
    expect(generated.out).toMatch(/Done!/)
    expect(generated.out).not.toMatch(/warn|❗|⚠/i)
  })

  it('generates code that typechecks with a typed round trip (tsc)', async () => {
    const tsc = await cli('node_modules/typescript/bin/tsc', ['-p', 'test/contract/generated-client/tsconfig.json'])
    expect(tsc.out).toBe('')
    expect(tsc.code).toBe(0)
  }, 180_000)

  describe('against a real server', () => {
    let server: ContractServer
    beforeAll(async () => { server = await startContractServer() })
    afterAll(async () => { await server?.close() })

    it('completes create → append batch → context → blob → export', async () => {
      // A specifier the repository's typecheck does not follow: the module needs the generated client.
      const { roundTrip } = await import(ROUND_TRIP) as { roundTrip: RoundTrip }
      const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3])
      const hash = createHash('sha256').update(bytes).digest('hex')
      const result = await roundTrip(server.baseUrl, bytes, hash)
      expect(result.appended).toEqual({ firstSeq: 1, lastSeq: 2, persisted: true, types: ['message', 'message'] })
      expect(result.contextRoles).toEqual(['user', 'assistant'])
      expect(result.blob).toEqual({ hash, ref: `blob:sha256:${hash}`, size: bytes.length, created: true })
      expect([...result.fetched]).toEqual([...bytes])
      expect(result.exportedLines).toHaveLength(3)
      expect(JSON.parse(result.exportedLines[0] as string)).toMatchObject({ type: 'session', id: result.sessionId, cwd: '/generated-client' })
      expect(JSON.parse(result.exportedLines[2] as string)).toMatchObject({ type: 'message', message: { role: 'assistant' } })
    })
  })
})

describe('@redocly/cli lint', () => {
  it('finds no error and no warning with the recommended rules', async () => {
    const lint = await cli('node_modules/@redocly/cli/bin/cli.js', ['lint', 'openapi/openapi.json', '--extends=recommended', '--format=summary'])
    // The summary lists one `<severity> <rule>: <count>` line per rule that found something.
    expect(lint.out.match(/^(error|warning) [\w-]+: \d+$/gm) ?? []).toEqual([])
    expect(lint.out).toMatch(/Your API description is valid/)
    expect(lint.out).not.toMatch(/You have \d+ warnings?/)
    expect(lint.out).toMatch(/^1 problem is explicitly ignored\.$/m)
    expect(lint.code, lint.out).toBe(0)
  }, 120_000)
})
