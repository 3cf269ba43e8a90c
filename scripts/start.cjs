#!/usr/bin/env node
'use strict'
/**
 * `npm start`'s entry: sizes libuv's thread pool, then runs `start.mjs` (build when stale, then
 * the compiled server, in this same process).
 *
 * Every file operation of the server runs on that pool, and each session has its own file and
 * its own fdatasync: with the default 4 threads, the syncs of 100 sessions appended to at once
 * wait 4 at a time, although the file system commits concurrent syncs together. libuv reads
 * UV_THREADPOOL_SIZE once, when the pool is first used, and an ES module entry has used it by
 * then (the module loader reads files through it), so this entry is CommonJS and sets the size
 * before anything else runs. A size set in the environment is kept.
 */

/** Threads of the pool unless UV_THREADPOOL_SIZE says otherwise. */
const THREAD_POOL_SIZE = 64

if (!process.env.UV_THREADPOOL_SIZE) process.env.UV_THREADPOOL_SIZE = String(THREAD_POOL_SIZE)

if (require.main === module) {
  import('./start.mjs').then(({ main }) => main())
}
