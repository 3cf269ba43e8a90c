/**
 * A second writer of a token file, in its own process, as `session-store token revoke` is:
 * `node --import tsx token-revoker.ts <file>` prints `ready`, then for each line on stdin (token
 * ids separated by spaces) revokes each id in turn with the CLI's own function and prints `done`;
 * it exits when stdin ends. One process serves every round of a race, so each round starts
 * revoking the moment its line arrives.
 */
import { createInterface } from 'node:readline'
import { removeToken } from '../../src/auth/tokens.js'

const [file] = process.argv.slice(2)
process.stdout.write('ready\n')
for await (const line of createInterface({ input: process.stdin })) {
  for (const id of line.split(' ').filter((s) => s !== '')) {
    if (!await removeToken(file as string, id)) throw new Error(`token ${id} was not in the file`)
  }
  process.stdout.write('done\n')
}
