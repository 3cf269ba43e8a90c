/**
 * The process entry point (STYLE.md §1): reads the configuration, takes the DATA_DIR lock,
 * opens storage, blobs and the session registry, listens, and shuts down gracefully on
 * SIGTERM/SIGINT (API.md "Running").
 */
import { join } from 'node:path'
import { pino, type Logger } from 'pino'
import { buildApp, type App } from './app.js'
import { FileBlobStore, MemoryBlobStore } from './blobs/index.js'
import { loadConfig, type Config } from './config.js'
import { acquireLock, type LockFile } from './lock-file.js'
import { createRegistry, type SessionRegistry } from './registry/session-registry.js'
import { createStorage } from './storage/index.js'

/** After this long, connections still open at shutdown are cut. */
const SHUTDOWN_GRACE_MS = 10_000

interface Running {
  app: App
  registry: SessionRegistry
  lock: LockFile | undefined
}

async function start (config: Config, logger: Logger): Promise<Running> {
  const disk = config.storage === 'disk'
  const lock = disk ? await acquireLock(join(config.dataDir, '.lock')) : undefined
  if (lock !== undefined) process.once('exit', () => lock.releaseSync())
  try {
    const storage = createStorage(config.storage)
    const blobs = disk ? new FileBlobStore(join(config.dataDir, 'blobs')) : new MemoryBlobStore()
    const registry = createRegistry({
      dataDir: config.dataDir, storage, blobs, logger, maxOpenSessions: config.maxOpenSessions,
    })
    const app = await buildApp({ config, storage, blobs, registry, logger })
    const address = await app.listen({ host: config.host, port: config.port })
    logger.info({ address, dataDir: config.dataDir, storage: config.storage }, 'session-store listening')
    return { app, registry, lock }
  } catch (err) {
    await lock?.release()
    throw err
  }
}

/** Stops accepting, ends live streams, closes every session (flush + fsync), drops the lock. */
async function stop ({ app, registry, lock }: Running, logger: Logger): Promise<number> {
  const cut = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref()
  let code = 0
  try {
    await app.close()
    await registry.close()
  } catch (err) {
    logger.error({ err }, 'shutdown failed')
    code = 1
  } finally {
    clearTimeout(cut)
    await lock?.release()
  }
  logger.info({ code }, 'session-store stopped')
  return code
}

function fail (logger: Logger, err: unknown): never {
  logger.fatal({ err }, 'session-store cannot start')
  const message = err instanceof Error ? err.message : String(err)
  process.stderr.write(`session-store: ${message}\n`)
  process.exit(1)
}

async function main (): Promise<void> {
  let config: Config
  try {
    config = loadConfig()
  } catch (err) {
    fail(pino(), err)
  }
  const logger = pino({ level: config.logLevel })
  const running = await start(config, logger).catch((err: unknown) => fail(logger, err))
  let stopping = false
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now')
      process.exit(1)
    }
    stopping = true
    logger.info({ signal }, 'shutting down')
    void stop(running, logger).then((code) => process.exit(code))
  }
  process.on('SIGTERM', onSignal)
  process.on('SIGINT', onSignal)
}

await main()
