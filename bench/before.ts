/**
 * Figures measured before the optimizations of this round, for the before/after table of
 * RESULTS.md. They come from the same benchmark scripts, run on 2026-12-02 on the same machine
 * with `BENCH_SERVER_ENTRY` pointing at a server built from the working tree with every file
 * the optimizations touched restored to commit 6f90a06 (everything else identical). The
 * in-memory deep-path figures are the first `npx tsx bench/deep-path.ts` of that day.
 * One run of each benchmark (each itself a median over its rounds where it has them).
 */
export const BEFORE = {
  append: { bare: 42_762, ours1: 14_686, ours100: 14_666, peer1: 878, peer100: 903, ratio1: 0.34, ratio100: 0.34, peerRatio1: 16.67, peerRatio100: 16.25, oursCores: 1.04 },
  fanoutA: { p50: 2, p99: 7, max: 20, rssGrowthMiB: 31.0 },
  fanoutB: { p50: 13, p99: 45, max: 98, rssGrowthMiB: 102.6 },
  ceiling: { broadcaster: 198_843, ours: 137_781, ratio: 0.71, oursBehind: 1_723, complete: false },
  coldOpen: { firstMs: 686, peakMiB: 470.0, peakRatio: 4.73 },
  deep: { appendAllMs: 446.2, contextMs: 54.4, branchMs: 25.5, treeMs: 69.9, httpContextMs: 135.8, httpTreeMs: 157.2 },
  many: { readyMs: 1_184, rssMiB: 149.9 },
} as const

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
