#!/usr/bin/env node
/**
 * The `session-store` executable (`bin/session-store.js` runs the compiled form of this file).
 * Wires the process into `runCli`: real streams and environment, Ctrl-C as an abort signal
 * (`serve` handles its own signals), and the exit code once the command is done.
 */
import type { Io } from './args.js'
import { runCli } from './run.js'

const argv = process.argv.slice(2)
const controller = new AbortController()
const serving = argv[0] === 'serve'

if (!serving) {
  let signals = 0
  const onSignal = (signal: NodeJS.Signals): void => {
    // The first signal lets the command finish its current step and clean up (the DATA_DIR
    // lock); a second one exits at once (the lock is still released by its exit handler).
    if (++signals > 1) process.exit(signal === 'SIGINT' ? 130 : 143)
    controller.abort()
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
}

// A closed pipe (`session-store tail … | head -1`) ends the command quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0)
    throw err
  })
}

const io: Io = { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd(), signal: controller.signal }
const code = await runCli(argv, io)
if (code !== 'serving') {
  // Let buffered output reach pipes, then exit without waiting for idle keep-alive sockets.
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()))
  await new Promise<void>((resolve) => process.stderr.write('', () => resolve()))
  process.exit(code)
}
