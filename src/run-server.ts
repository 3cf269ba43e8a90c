/**
 * Starting and stopping the server process (API.md "Running"): takes the DATA_DIR lock, opens
 * storage, blobs and the session registry, listens, and shuts down gracefully on
 * SIGTERM/SIGINT. `src/server.ts` (`npm start`) and `session-store serve` both run this; it
 * lives apart from `server.ts` so that importing it starts nothing.
 */
import { join } from 'node:path'
import { pino, type Logger } from 'pino'
import { buildApp, type App } from './app.js'
import { FileBlobStore, MemoryBlobStore } from './blobs/index.js'
import type { Config } from './config.js'
import { acquireLock, type LockFile } from './lock-file.js'
import { createRegistry, type SessionRegistry } from './registry/session-registry.js'
import { createStorage } from './storage/index.js'

/** After this long, connections still open at shutdown are cut. */
const SHUTDOWN_GRACE_MS = 10_000

/** A listening server, as `startServer` returns it. */
export interface RunningServer {
  app: App
  registry: SessionRegistry
  lock: LockFile | undefined
  /** The address Fastify reports, e.g. `http://127.0.0.1:8787`. */
  address: string
}

/**
 * Takes the lock (disk storage only), opens everything and listens.
 * @throws DataDirLocked when another live process owns `config.dataDir`; any start-up error,
 * after the lock was released again.
 */
export async function startServer (config: Config, logger: Logger): Promise<RunningServer> {
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
    return { app, registry, lock, address }
  } catch (err) {
    await lock?.release()
    throw err
  }
}

/**
 * Stops accepting, ends live streams, closes every session (flush + fsync), drops the lock.
 * Resolves with the process exit code: 0 when everything closed cleanly, else 1.
 */
export async function stopServer ({ app, registry, lock }: RunningServer, logger: Logger): Promise<number> {
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

/**
 * Starts the server and, on the first SIGTERM or SIGINT, stops it and exits the process with
 * `stopServer`'s code; a second signal exits 1 at once. A start-up failure is logged at
 * `fatal` and rethrown (the caller reports it and exits 1).
 */
export async function runServer (config: Config, logger: Logger = pino({ level: config.logLevel })): Promise<RunningServer> {
  let running: RunningServer
  try {
    running = await startServer(config, logger)
  } catch (err) {
    logger.fatal({ err }, 'session-store cannot start')
    throw err
  }
  let stopping = false
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now')
      process.exit(1)
    }
    stopping = true
    logger.info({ signal }, 'shutting down')
    void stopServer(running, logger).then((code) => process.exit(code))
  }
  process.on('SIGTERM', onSignal)
  process.on('SIGINT', onSignal)
  return running
}
