/**
 * The process entry point (STYLE.md §1, `npm start`): reads the configuration from the
 * environment and runs the server (`run-server.ts`: DATA_DIR lock, storage, registry, listen,
 * graceful shutdown on SIGTERM/SIGINT, API.md "Running").
 */
import { pino } from 'pino'
import { loadConfig, type Config } from './config.js'
import { processLogger } from './http/request-log.js'
import { runServer } from './run-server.js'

function fail (err: unknown): never {
  const message = err instanceof Error ? err.message : String(err)
  process.stderr.write(`session-store: ${message}\n`)
  process.exit(1)
}

async function main (): Promise<void> {
  let config: Config
  try {
    config = loadConfig()
  } catch (err) {
    pino().fatal({ err }, 'session-store cannot start')
    fail(err)
  }
  await runServer(config, processLogger(config.logLevel)).catch(fail)
}

await main()
