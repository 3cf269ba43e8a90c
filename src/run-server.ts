/**
 * Starting and stopping the server process (API.md "Running"): takes the DATA_DIR lock, loads
 * the tokens (AUTH_TOKENS_FILE), opens storage, blobs and the session registry, listens, reloads
 * the tokens on SIGHUP (connections stay up) and shuts down gracefully on
 * SIGTERM/SIGINT. `src/server.ts` (`npm start`) and `session-store serve` both run this; it
 * lives apart from `server.ts` so that importing it starts nothing.
 */
import { join } from 'node:path'
import type { Logger } from 'pino'
import { buildApp, type App } from './app.js'
import { DEFAULT_TENANT, TokenStore } from './auth/tokens.js'
import { registryLimits, type Config } from './config.js'
import { InvalidConfig } from './errors.js'
import { boundHeapGrowth } from './heap-growth.js'
import { processLogger } from './http/request-log.js'
import { acquireLock, type LockFile } from './lock-file.js'
import { createRegistry, type SessionRegistry } from './registry/session-registry.js'
import { openStore } from './storage/open-store.js'

/** After this long, connections still open at shutdown are cut. */
const SHUTDOWN_GRACE_MS = 10_000

/** A listening server, as `startServer` returns it. */
export interface RunningServer {
  app: App
  registry: SessionRegistry
  lock: LockFile | undefined
  /** The tokens in force; undefined in open mode (no AUTH_TOKENS_FILE). */
  tokens: TokenStore | undefined
  /** The address Fastify reports, e.g. `http://127.0.0.1:8787`. */
  address: string
  /** Releases the storage (the database pool of `STORAGE=postgres`) once the registries closed. */
  closeStorage: () => Promise<void>
}

/**
 * The token file, read once at start. A server configured for tokens never starts open.
 * @throws InvalidConfig naming AUTH_TOKENS_FILE when the file is missing or invalid.
 */
async function loadTokens (path: string): Promise<TokenStore> {
  try {
    return await TokenStore.load(path)
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT'
    const why = missing
      ? `${path} does not exist; create the first token with: session-store token create --file ${path} --tenant default --scopes admin`
      : `${path}: ${(err as Error).message}`
    throw new InvalidConfig('AUTH_TOKENS_FILE', why)
  }
}

/**
 * Re-reads the token file (SIGHUP). Open connections are untouched, and so are live streams
 * whose token is still in the file; requests from now on use the new tokens. A file that does not load leaves the previous tokens in force.
 * Resolves true when the new tokens are in force.
 */
export async function reloadTokens ({ tokens }: RunningServer, logger: Logger): Promise<boolean> {
  if (tokens === undefined) {
    logger.info({}, 'SIGHUP ignored: no AUTH_TOKENS_FILE')
    return false
  }
  try {
    await tokens.reload()
    logger.info({ file: tokens.path, tokens: tokens.size }, 'tokens reloaded')
    return true
  } catch (err) {
    logger.error({ err, file: tokens.path, tokens: tokens.size }, 'token reload failed; the previous tokens stay in force')
    return false
  }
}

/**
 * Takes the DATA_DIR lock (not for memory storage), opens
 * everything and listens.
 * @throws DataDirLocked when another live process owns `config.dataDir`; any start-up error,
 * after the lock was released and the storage closed again.
 */
export async function startServer (config: Config, logger: Logger): Promise<RunningServer> {
  const lock = config.storage === 'memory' ? undefined : await acquireLock(join(config.dataDir, '.lock'))
  if (lock !== undefined) process.once('exit', () => lock.releaseSync())
  let closeStorage = async (): Promise<void> => {}
  try {
    const tokens = config.authTokensFile === undefined ? undefined : await loadTokens(config.authTokensFile)
    const opened = await openStore(config, logger)
    const store = opened.store
    closeStorage = opened.close
    const blobs = opened.blobs(config.dataDir, DEFAULT_TENANT)
    const registry = createRegistry({
      tenant: DEFAULT_TENANT, dataDir: config.dataDir, store, blobs, logger, maxOpenSessions: config.maxOpenSessions, limits: registryLimits(config),
    })
    const app = await buildApp({ config, store, blobs, blobStores: opened.blobs, registry, logger, ...(tokens === undefined ? {} : { tokens }) })
    const address = await app.listen({ host: config.host, port: config.port })
    const auth = tokens === undefined ? 'open' : 'tokens'
    logger.info({ address, dataDir: config.dataDir, storage: config.storage, auth, tokens: tokens?.size }, 'session-store listening')
    return { app, registry, lock, tokens, address, closeStorage }
  } catch (err) {
    await closeStorage().catch(() => {})
    await lock?.release()
    throw err
  }
}

/**
 * Stops accepting, ends live streams of every tenant, closes every session (flush + fsync; the
 * app closes the tenants it opened, then the default registry closes), closes the storage (the
 * database pool), drops the lock.
 * Resolves with the process exit code: 0 when everything closed cleanly, else 1.
 */
export async function stopServer ({ app, registry, lock, closeStorage }: RunningServer, logger: Logger): Promise<number> {
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
    await closeStorage().catch((err: unknown) => {
      logger.error({ err }, 'closing the storage failed')
      code = 1
    })
    await lock?.release()
  }
  logger.info({ code }, 'session-store stopped')
  return code
}

/**
 * Fixes the heap's growth (heap-growth.ts), starts the server and, on the first SIGTERM or
 * SIGINT, stops it and exits the process with `stopServer`'s code; a second signal exits 1 at
 * once. A signal before the server listens exits 0 at once. SIGHUP reloads the tokens. A start-up failure is logged at `fatal` and rethrown (the
 * caller reports it and exits 1).
 */
export async function runServer (config: Config, logger: Logger = processLogger(config.logLevel)): Promise<RunningServer> {
  boundHeapGrowth()
  // Until the server listens, a SIGTERM or SIGINT exits at once with 0: nothing has been
  // acknowledged yet, and the lock is released on exit. Node as PID 1 of a container has no
  // default action for SIGTERM, so without this a stop during a long start-up (an index to
  // build, a database that does not answer yet) would be ignored until the engine kills it.
  const duringStart = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, 'signal during start-up: exiting')
    process.exit(0)
  }
  process.once('SIGTERM', duringStart)
  process.once('SIGINT', duringStart)
  let running: RunningServer
  try {
    running = await startServer(config, logger)
  } catch (err) {
    logger.fatal({ err }, 'session-store cannot start')
    throw err
  } finally {
    process.off('SIGTERM', duringStart)
    process.off('SIGINT', duringStart)
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
  process.on('SIGHUP', () => { void reloadTokens(running, logger) })
  return running
}
