/**
 * Figures measured before the optimizations, for the before/after table of RESULTS.md. They come
 * from the same benchmark scripts, run on 2026-12-03 on the machine of this run, with
 * `BENCH_SERVER_ENTRY` pointing at the server of commit 6f90a06 (the last commit before them; it
 * also predates the access plugins, which only make "after" do more), built with
 * tsconfig.build.json. The in-memory deep-path figures are one `npx tsx bench/deep-path.ts` of that
 * commit's checkout. One run of each benchmark (each itself a median over its rounds where it has
 * them).
 */
export const BEFORE = {
  append: { bare: 21_266, ours1: 8_441, ours100: 7_974, peer1: 613, peer100: 619, ratio1: 0.40, ratio100: 0.37, peerRatio1: 14.39, peerRatio100: 12.88, oursCores: 1.02 },
  fanoutA: { p50: 2, p99: 13, max: 60, rssGrowthMiB: 58.0 },
  fanoutB: { p50: 73, p99: 180, max: 280, rssGrowthMiB: 128.8 },
  ceiling: { broadcaster: 72_721, ours: 68_749, ratio: 0.95, oursBehind: 9_324, complete: false },
  coldOpen: { firstMs: 2_381, peakMiB: 467.0, peakRatio: 4.70 },
  deep: { appendAllMs: 926.0, contextMs: 69.9, branchMs: 45.6, treeMs: 156.1, httpContextMs: 309.5, httpTreeMs: 467.8 },
  many: { readyMs: 2_005, rssMiB: 151.4 },
} as const

/**
 * The full run of 2026-12-02 on another machine of the same kind (2 × Intel Xeon, where today's is
 * 2 × AMD EPYC), with the cold-open and deep-path code as it is now: what the same code reached
 * there, for the targets set in absolute terms (RESULTS.md history has the whole run).
 */
export const EARLIER_MACHINE = { date: '2026-12-02', cpu: '2 × Intel Xeon', coldFirstMs: 579, parseRatio: 0.67, deepContextMs: 30.6 } as const

/** What changed, in the order the measurements called for it (RESULTS.md "Optimizations"). */
export const OPTIMIZATIONS: string[] = [
  '**Append path, per request** (`src/registry/*`, `src/session/*`): entry ids from a 4 KiB pool of CSPRNG bytes instead of one ' +
    '`crypto.randomBytes(4)` per id (7 % of the server\'s CPU in the profile); no etag (a SHA-256) computed for an absent `If-Match`; ' +
    'the etag hashed in one `crypto.hash` call over one string (identical value); the listing view built for `session-updated` only ' +
    'when a dashboard listens; the blob pass of an append skipped when no `type: "image"` object is in the batch; ISO timestamps ' +
    'formatted once per millisecond; no object-rest copies of the entry; a loaded session used without the async acquire path; a ' +
    'free per-session mutex taken without a tick.',
  '**Group commit** (`src/session/write-queue.ts`): the JSONL line of an appended entry is made when the append is queued (while ' +
    'the request is handled) rather than when its batch task starts, so between one batch\'s `fdatasync` and the next batch\'s ' +
    '`write` only strings are joined (records with image data to externalize still go through the blob step in the task). Batches ' +
    'stay one write + one `fdatasync` for every append that arrived meanwhile (~45 appends per sync at 100 connections).',
  '**SSE fan-out** (`src/http/event-streams.ts`, `src/http/frame-cache.ts`): each entry\'s frame is serialized once and shared by ' +
    'every subscriber through a small cache (1 MiB / 4,096 frames, oldest out first, keyed by the entry object and its seq); the ' +
    'frames of one read go out in writes of up to 32 KiB instead of one write each; a live stream reads the loaded session ' +
    'directly and, after a short read, waits for the next wake instead of reading once more.',
  '**Cold open** (`src/session/parser.ts`, `src/session/session-loader.ts`, `src/storage/*`): the file is read 1 MiB at a time and ' +
    'parsed as it arrives (`JsonlStreamParser`, the exact rules of `parseJsonlLenient`), decoded in 64 KiB pieces so the garbage ' +
    'stays in V8\'s young generation; neither the file\'s bytes nor its text are ever held whole next to its records. `open` learns ' +
    'the cwd from the same pass. Storages without the new optional `readTextChunks` keep the old path.',
  '**Append path, second round** (CPU profile under the append load: GC 10 µs per append, then the response ' +
    '`JSON.stringify`, the entry id, the body depth check): the JSON depth limit settled by counting opening brackets with ' +
    '`indexOf` when there are no more than the limit (1.57 → 0.06 µs per 1 KB body); entry ids read as hex straight from the ' +
    'random pool; in open mode without limits a synchronous access hook, and the security-header and batch-size hooks in ' +
    'callback style (an async hook is a promise and a microtask per request); the append\'s synchronous step run directly on a ' +
    'free per-session lock (`Mutex.runSync`). Answers, on-disk bytes and the sync before `persisted: true` are unchanged.',
]
