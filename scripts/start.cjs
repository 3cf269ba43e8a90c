#!/usr/bin/env node
'use strict'
/**
 * `npm start`'s entry: sizes libuv's thread pool and raises the file descriptor limit, then runs
 * `start.mjs` (build when stale, then the compiled server, in this same process).
 *
 * Every file operation of the server runs on that pool, and each session has its own file and
 * its own fdatasync: with the default 4 threads, the syncs of 100 sessions appended to at once
 * wait 4 at a time, although the file system commits concurrent syncs together. libuv reads
 * UV_THREADPOOL_SIZE once, when the pool is first used, and an ES module entry has used it by
 * then (the module loader reads files through it), so this entry is CommonJS and sets the size
 * before anything else runs. A size set in the environment is kept.
 *
 * The server's connection caps follow the soft descriptor limit it finds at start
 * (src/http/descriptor-limit.ts), so the soft limit should be the hard one. Node raises it so
 * itself as it starts (`PlatformInit` in its src/node.cc), so this usually finds nothing to do;
 * where that did not happen, util-linux `prlimit --pid` raises it on this very process. A re-exec
 * through `sh -c 'ulimit -n …; exec node …'` would put a new process in place of this one, with
 * this one left to forward signals and exit codes; `prlimit` keeps one process, whose signals,
 * pid and exit code stay the server's own. Without procfs or `prlimit` the server starts with the
 * limit it has, and its caps follow that.
 */
const { spawnSync } = require('node:child_process')
const { readFileSync } = require('node:fs')

/** Threads of the pool unless UV_THREADPOOL_SIZE says otherwise. */
const THREAD_POOL_SIZE = 64

if (!process.env.UV_THREADPOOL_SIZE) process.env.UV_THREADPOOL_SIZE = String(THREAD_POOL_SIZE)

/** `{ soft, hard }` RLIMIT_NOFILE of process `pid` (`Infinity` = unlimited), or undefined without procfs. */
function descriptorLimits (pid = process.pid) {
  let text
  try {
    text = readFileSync(`/proc/${pid}/limits`, 'utf8')
  } catch {
    return undefined
  }
  const match = /^Max open files\s+(\S+)\s+(\S+)/m.exec(text)
  if (match === null) return undefined
  const value = (v) => v === 'unlimited' ? Number.POSITIVE_INFINITY : Number(v)
  return { soft: value(match[1]), hard: value(match[2]) }
}

/** Raises the soft descriptor limit of process `pid` to its hard one; returns the limits then in force. */
function raiseDescriptorLimit (pid = process.pid) {
  const limits = descriptorLimits(pid)
  if (limits === undefined || limits.soft >= limits.hard || !Number.isFinite(limits.hard)) return limits
  spawnSync('prlimit', ['--pid', String(pid), `--nofile=${limits.hard}:${limits.hard}`], { stdio: 'ignore', timeout: 5000 })
  return descriptorLimits(pid)
}

module.exports = { descriptorLimits, raiseDescriptorLimit }

if (require.main === module) {
  raiseDescriptorLimit()
  import('./start.mjs').then(({ main }) => main())
}
