/**
 * `session-store token create|list|revoke`: create prints the secret once, alone on stdout, and
 * stores only its hash; list shows no secrets or hashes; revoke removes a token; the file comes
 * from `--file` or AUTH_TOKENS_FILE; wrong invocations are usage errors (exit 2).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { hashSecret, parseTokenFile, TokenStore } from '../../src/auth/tokens.js'
import { runCli } from '../../src/cli/run.js'
import { cli, memoryIo } from './helpers.js'

let dir: string
let file: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ss-cli-token-'))
  file = join(dir, 'tokens.json')
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

async function run (args: string[], env: Record<string, string> = {}): Promise<{ code: number | 'serving', stdout: string, stderr: string }> {
  const { io, stdout, stderr } = memoryIo(env, dir)
  const code = await runCli(args, io)
  return { code, stdout: stdout(), stderr: stderr() }
}

describe('token create', () => {
  it('prints the secret alone on stdout, a note on stderr, and stores only its hash', async () => {
    const res = await run(['token', 'create', '--tenant', 'acme', '--scopes', 'read,write', '--name', 'ci', '--file', file])
    expect(res.code).toBe(0)
    expect(res.stdout).toMatch(/^sst_[A-Za-z0-9_-]{43}\n$/)
    const secret = res.stdout.trim()
    expect(res.stderr).toMatch(/^created token tok_\w+ for tenant acme \(read, write\) in .*tokens\.json\nThe secret above is shown only this once/)
    const text = readFileSync(file, 'utf8')
    expect(text).not.toContain(secret)
    const [token] = parseTokenFile(text).tokens
    expect(token).toMatchObject({ tenant: 'acme', scopes: ['read', 'write'], name: 'ci', sha256: hashSecret(secret) })
    const verdict = (await TokenStore.load(file)).verify(secret)
    expect(verdict.ok && verdict.principal.tenant).toBe('acme')
  })

  it('takes the file from AUTH_TOKENS_FILE (relative to the working directory) and an expiry', async () => {
    const res = await run(['token', 'create', '--tenant', 'default', '--scopes', 'admin', '--expires', '2999-01-01T00:00:00Z'], { AUTH_TOKENS_FILE: 'tokens.json' })
    expect(res.code).toBe(0)
    expect(parseTokenFile(readFileSync(file, 'utf8')).tokens[0]).toMatchObject({ tenant: 'default', scopes: ['admin'], expiresAt: '2999-01-01T00:00:00.000Z' })
  })

  it('works from the executable: stdout is the secret and nothing else', async () => {
    const res = await cli(['token', 'create', '--tenant', 'acme', '--scopes', 'read', '--file', file])
    expect(res.code).toBe(0)
    expect(res.stdout.split('\n')).toEqual([expect.stringMatching(/^sst_/), ''])
    expect(res.stderr).toContain('created token')
  })
})

describe('token list and revoke', () => {
  it('lists ids, tenants and scopes without secrets or hashes; revokes by id', async () => {
    const a = await run(['token', 'create', '--tenant', 'acme', '--scopes', 'read', '--file', file])
    await run(['token', 'create', '--tenant', 'globex', '--scopes', 'admin', '--name', 'ops', '--file', file])
    const [acme, globex] = parseTokenFile(readFileSync(file, 'utf8')).tokens
    const list = await run(['token', 'list', '--file', file])
    expect(list.code).toBe(0)
    const lines = list.stdout.trimEnd().split('\n')
    expect(lines[0]).toBe('id\ttenant\tscopes\tcreated\texpires\tname')
    expect(lines.slice(1)).toEqual([
      `${acme!.id}\tacme\tread\t${acme!.createdAt}\tnever`,
      `${globex!.id}\tglobex\tadmin\t${globex!.createdAt}\tnever\tops`,
    ])
    expect(list.stdout).not.toContain(a.stdout.trim())
    expect(list.stdout).not.toContain(acme!.sha256)
    expect((await run(['token', 'list', '--tenant', 'globex', '--file', file])).stdout.trimEnd().split('\n')).toHaveLength(2)

    const revoked = await run(['token', 'revoke', acme!.id, '--file', file])
    expect(revoked.code).toBe(0)
    expect(revoked.stderr).toContain(`revoked ${acme!.id}`)
    expect(parseTokenFile(readFileSync(file, 'utf8')).tokens.map((t) => t.id)).toEqual([globex!.id])
    const again = await run(['token', 'revoke', acme!.id, '--file', file])
    expect(again.code).toBe(1)
    expect(again.stderr).toBe(`session-store: no token '${acme!.id}' in ${file}\n`)
  })

  it('lists an absent file as empty', async () => {
    const res = await run(['token', 'list', '--file', file])
    expect(res.code).toBe(0)
    expect(res.stdout).toBe('id\ttenant\tscopes\tcreated\texpires\tname\n')
    expect(res.stderr).toContain('no tokens in')
  })
})

describe('token usage errors (exit 2)', () => {
  it.each([
    [['token'], 'token: missing argument'],
    [['token', 'mint', '--file', 'f'], "token: unknown action 'mint'"],
    [['token', 'create', '--scopes', 'read', '--file', 'f'], 'token create: missing --tenant <name>'],
    [['token', 'create', '--tenant', 'acme', '--file', 'f'], 'token create: missing --scopes'],
    [['token', 'create', '--tenant', 'Acme!', '--scopes', 'read', '--file', 'f'], '--tenant: expected lowercase letters'],
    [['token', 'create', '--tenant', 'acme', '--scopes', 'read,root', '--file', 'f'], "--scopes: expected a comma-separated list of read, write, admin, got 'read,root'"],
    [['token', 'create', '--tenant', 'acme', '--scopes', 'read', '--expires', 'soon', '--file', 'f'], "--expires: expected an ISO 8601 date, got 'soon'"],
    [['token', 'create', '--tenant', 'acme', '--scopes', 'read', '--expires', '2001-01-01', '--file', 'f'], '--expires: 2001-01-01 is in the past'],
    [['token', 'create', '--tenant', 'acme', '--scopes', 'read'], 'token: missing --file <path> (or AUTH_TOKENS_FILE)'],
    [['token', 'list', '--scopes', 'read', '--file', 'f'], 'token list: --scopes is not an option of list'],
    [['token', 'revoke', '--file', 'f'], 'token revoke: missing argument <id>'],
    [['token', 'list', 'extra', '--file', 'f'], "token list: unexpected argument 'extra'"],
  ])('%j', async (args, message) => {
    const res = await run(args)
    expect(res.code).toBe(2)
    expect(res.stdout).toBe('')
    expect(res.stderr).toContain(message)
  })
})
