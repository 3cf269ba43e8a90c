// The search index's worker thread when the server runs from its TypeScript sources (the tests,
// `tsx`): a worker does not inherit the parent's loader, so this registers tsx's and then runs
// search-worker.ts. The compiled server starts search-worker.js directly and never loads this file.
const { register } = await import('tsx/esm/api')
register()
await import('./search-worker.ts')
