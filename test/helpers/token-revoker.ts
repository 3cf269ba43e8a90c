/**
 * A second writer of a token file, in its own process, as `session-store token revoke` is:
 * `node --import tsx token-revoker.ts <file> <id>...` prints `ready`, waits for a line on stdin,
 * then revokes each id in turn with the CLI's own function and prints `done`.
 */
import { once } from 'node:events'
import { removeToken } from '../../src/auth/tokens.js'

const [file, ...ids] = process.argv.slice(2)
process.stdout.write('ready\n')
await once(process.stdin, 'data')
for (const id of ids) {
  if (!await removeToken(file as string, id)) throw new Error(`token ${id} was not in the file`)
}
process.stdout.write('done\n')
process.stdin.destroy()
