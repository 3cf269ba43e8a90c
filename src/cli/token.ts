/**
 * `session-store token create|list|revoke`: manages the token file (AUTH_TOKENS_FILE, or
 * `--file`) directly. `create` prints the new secret once, alone on stdout (so that it can be
 * captured), and stores only its SHA-256; `list` never shows a secret or a hash. A running server
 * picks changes up on SIGHUP.
 */
import { resolve } from 'node:path'
import { addToken, readTokenFileOrEmpty, removeToken, SCOPES, TENANT_RE, type Scope, type TokenRecord } from '../auth/tokens.js'
import { CliError, EXIT_OK, stringFlag, UsageError, writeOut, type Command, type Io, type Values } from './args.js'

const ACTIONS = ['create', 'list', 'revoke'] as const
type Action = (typeof ACTIONS)[number]

/** The flags each action takes (`file` always). */
const FLAGS_OF: Record<Action, readonly string[]> = {
  create: ['tenant', 'scopes', 'expires', 'name', 'file'],
  list: ['tenant', 'file'],
  revoke: ['file'],
}

/** `token create|list|revoke`. */
export const tokenCommand: Command = {
  name: 'token',
  summary: 'create, list and revoke access tokens (AUTH_TOKENS_FILE)',
  help: `Usage: session-store token create --tenant <name> --scopes <list> [--expires <ISO>] [--name <label>] [--file <path>]
       session-store token list [--tenant <name>] [--file <path>]
       session-store token revoke <id> [--file <path>]

Manages the token file the server reads from AUTH_TOKENS_FILE (created when missing). A token
belongs to one tenant and carries scopes: read (list, read, export, subscribe), write (also
every change) and admin (also managing tokens); admin implies write implies read.

create prints the new secret on stdout, alone on its line, and only this once: the file keeps
its SHA-256. list shows ids, tenants, scopes and dates, never a secret or a hash. A running
server uses the changes after SIGHUP (kill -HUP <pid>).

Options:
  --tenant <name>     the token's tenant (create), or only this tenant's tokens (list);
                      'default' is the tenant of DATA_DIR itself
  --scopes <list>     comma-separated: read, write, admin (create)
  --expires <ISO>     when the token stops working, e.g. 2027-01-01T00:00:00Z (create)
  --name <label>      a label for people (create)
  --file <path>       the token file (default: AUTH_TOKENS_FILE)
  -h, --help          show this help
`,
  options: {
    tenant: { type: 'string' },
    scopes: { type: 'string' },
    expires: { type: 'string' },
    name: { type: 'string' },
    file: { type: 'string' },
  },
  positionals: [1, 2],
  async run (values, [rawAction, id], io) {
    const action = checkAction(rawAction as string, values, id)
    const file = tokenFile(values, io)
    if (action === 'create') return await create(values, file, io)
    if (action === 'list') return await list(file, stringFlag(values, 'tenant'), io)
    if (!await removeToken(file, id as string)) throw new CliError(`no token '${id as string}' in ${file}`)
    io.stderr.write(`revoked ${id as string}; a running server stops accepting it after SIGHUP\n`)
    return EXIT_OK
  },
}

function checkAction (action: string, values: Values, id: string | undefined): Action {
  if (!(ACTIONS as readonly string[]).includes(action)) throw new UsageError(`token: unknown action '${action}' (create, list or revoke)`)
  const known = action as Action
  for (const flag of Object.keys(values)) {
    if (values[flag] !== undefined && !FLAGS_OF[known].includes(flag)) throw new UsageError(`token ${known}: --${flag} is not an option of ${known}`)
  }
  if (known === 'revoke' && id === undefined) throw new UsageError('token revoke: missing argument <id>')
  if (known !== 'revoke' && id !== undefined) throw new UsageError(`token ${known}: unexpected argument '${id}'`)
  return known
}

function tokenFile (values: Values, io: Io): string {
  const file = stringFlag(values, 'file') ?? io.env.AUTH_TOKENS_FILE
  if (file === undefined || file.trim() === '') throw new UsageError('token: missing --file <path> (or AUTH_TOKENS_FILE)')
  return resolve(io.cwd, file)
}

function scopesOf (raw: string | undefined): Scope[] {
  if (raw === undefined) throw new UsageError('token create: missing --scopes <list> (read, write, admin)')
  const scopes = raw.split(',').map((s) => s.trim()).filter((s) => s !== '')
  const bad = scopes.find((s) => !(SCOPES as readonly string[]).includes(s))
  if (bad !== undefined || scopes.length === 0) throw new UsageError(`--scopes: expected a comma-separated list of read, write, admin, got '${raw}'`)
  return [...new Set(scopes)] as Scope[]
}

function expiryOf (raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined
  const at = Date.parse(raw)
  if (Number.isNaN(at)) throw new UsageError(`--expires: expected an ISO 8601 date, got '${raw}'`)
  if (at <= Date.now()) throw new UsageError(`--expires: ${raw} is in the past`)
  return new Date(at).toISOString()
}

async function create (values: Values, file: string, io: Io): Promise<number> {
  const tenant = stringFlag(values, 'tenant')
  if (tenant === undefined) throw new UsageError('token create: missing --tenant <name>')
  if (!TENANT_RE.test(tenant)) throw new UsageError(`--tenant: expected lowercase letters, digits, '_' and '-' (at most 63), got '${tenant}'`)
  const scopes = scopesOf(stringFlag(values, 'scopes'))
  const expiresAt = expiryOf(stringFlag(values, 'expires'))
  const name = stringFlag(values, 'name')
  const { secret, token } = await addToken(file, { tenant, scopes, ...(expiresAt === undefined ? {} : { expiresAt }), ...(name === undefined ? {} : { name }) })
  await writeOut(io.stdout, `${secret}\n`)
  io.stderr.write(`created token ${token.id} for tenant ${tenant} (${token.scopes.join(', ')}) in ${file}\n` +
    'The secret above is shown only this once. A running server uses the token after SIGHUP.\n')
  return EXIT_OK
}

/** One line per token: id, tenant, scopes, created, expires, name. */
export function tokenLine (t: TokenRecord): string {
  return [t.id, t.tenant, t.scopes.join(','), t.createdAt, t.expiresAt ?? 'never', t.name ?? ''].join('\t').trimEnd()
}

async function list (file: string, tenant: string | undefined, io: Io): Promise<number> {
  const { tokens } = await readTokenFileOrEmpty(file)
  const shown = tokens.filter((t) => tenant === undefined || t.tenant === tenant)
  await writeOut(io.stdout, ['id\ttenant\tscopes\tcreated\texpires\tname', ...shown.map(tokenLine)].join('\n') + '\n')
  if (shown.length === 0) io.stderr.write(`no tokens in ${file}${tenant === undefined ? '' : ` for tenant ${tenant}`}\n`)
  return EXIT_OK
}
