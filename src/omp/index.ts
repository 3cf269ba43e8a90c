/**
 * `session-store/omp`: oh-my-pi's sessions kept in a session-store server. Wrap the backend in
 * oh-my-pi's `IndexedSessionStorage` and hand that to `SessionManager.create(cwd, dir, storage)`
 * (README "Use it with pi and oh-my-pi"). Loads nothing but Node built-ins (and runs under Bun).
 */
export { HttpSessionStorageBackend, type HttpSessionStorageOptions, type SessionIndexEntry } from './http-session-storage.js'
export { SessionStoreHttpError, SessionWriteConflictError, type OmpHttpOptions } from './omp-http.js'
export type { TitleUpdate } from './title-line.js'
