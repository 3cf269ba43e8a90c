/**
 * `session-store serve` flags for the access and limit options: each maps to its variable (and
 * wins over it), `--allow-unauthenticated` is a switch, and the exposure check names the flag.
 */
import { describe, expect, it } from 'vitest'
import { runCli } from '../../src/cli/run.js'
import { serveConfig, serveCommand } from '../../src/cli/serve.js'
import { memoryIo } from './helpers.js'

const FLAGS: Array<[string, string, string]> = [
  ['auth-tokens-file', 'AUTH_TOKENS_FILE', 'tokens.json'],
  ['rate-limit-max', 'RATE_LIMIT_MAX', '7'],
  ['rate-limit-window-ms', 'RATE_LIMIT_WINDOW_MS', '1000'],
  ['max-sse-per-token', 'MAX_SSE_PER_TOKEN', '3'],
  ['max-batch-entries', 'MAX_BATCH_ENTRIES', '10'],
  ['max-event-loop-delay-ms', 'MAX_EVENT_LOOP_DELAY_MS', '250'],
  ['cors-origins', 'CORS_ORIGINS', 'https://app.example'],
]

describe('serve flags for access and limits', () => {
  it('--help names every flag with its variable', () => {
    for (const [flag, variable] of [...FLAGS, ['allow-unauthenticated', 'ALLOW_UNAUTHENTICATED']]) {
      expect(serveCommand.help).toMatch(new RegExp(`--${flag}\\b.*${variable}`))
    }
  })

  it('maps each flag to its variable, over the environment', () => {
    const values = Object.fromEntries(FLAGS.map(([flag, , value]) => [flag, value]))
    const env = Object.fromEntries(FLAGS.map(([, variable]) => [variable, '']))
    const config = serveConfig({ ...values, host: '0.0.0.0' }, { ...env, RATE_LIMIT_MAX: '99' }, '/srv')
    expect(config).toMatchObject({
      host: '0.0.0.0',
      authTokensFile: '/srv/tokens.json',
      rateLimitMax: 7,
      rateLimitWindowMs: 1000,
      maxSsePerToken: 3,
      maxBatchEntries: 10,
      maxEventLoopDelayMs: 250,
      corsOrigins: ['https://app.example'],
    })
  })

  it('--allow-unauthenticated lets a non-loopback --host start open; without it the flag is named', async () => {
    expect(serveConfig({ host: '0.0.0.0', 'allow-unauthenticated': true }, {}, '/srv')).toMatchObject({ allowUnauthenticated: true })
    const { io, stderr } = memoryIo()
    expect(await runCli(['serve', '--host', '0.0.0.0'], io)).toBe(2)
    expect(stderr()).toMatch(/^session-store: --host: 0\.0\.0\.0 is not a loopback address and AUTH_TOKENS_FILE is not set/)
  })

  it('an invalid value is a usage error naming the flag', async () => {
    const { io, stderr } = memoryIo()
    expect(await runCli(['serve', '--max-batch-entries', 'lots'], io)).toBe(2)
    expect(stderr()).toContain('--max-batch-entries: expected an integer from 0')
  })
})
