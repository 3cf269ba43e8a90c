/**
 * The raw material of the API fuzz: value pools that fast-check fills from the run's seed,
 * escape attempts, odd working directories, terminal ids and content types, and the body
 * shapes no client should send (very deep, very big).
 */
import fc from 'fast-check'

export interface Pools { json: unknown[], text: string[] }

/** Random JSON values and strings, from fast-check with the run's seed. */
export function makePools (seed: number): Pools {
  return {
    json: fc.sample(fc.jsonValue({ maxDepth: 4 }), { seed, numRuns: 400 }),
    text: fc.sample(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), fc.string()),
      { seed: seed + 1, numRuns: 400 }),
  }
}

/** Escape attempts; `@M` is replaced by the run's marker file name, looked for afterwards. */
export const TRAVERSALS = [
  '..', '.', '..%2F..%2Fetc%2Fpasswd', '..%2F..%2F..%2F@M', '%2e%2e%2f%2e%2e%2f@M', '..%5C..%5C@M', '....%2F%2F@M',
  '%252e%252e%252f@M', '%C0%AE%C0%AE%2F@M', '%00', 'abc%00def', '%00..%2F@M', '..%00', '%2F@M', '%2Fetc%2Fpasswd',
  '..;%2F@M', '%', '%zz', '%E0%A4%A', 'recent', 'continue', 'import', 'sha256', '~root', '%20', '-', '_x',
  'a'.repeat(129), 'A'.repeat(1100), '%F0%9F%92%A9', 'CON', 'nul', '.jsonl', '*', '%2A',
]
export const CWDS = [
  '/work/fuzz', '/work/fuzz/b', '../../@M', '/../../../@M', '..', '.', '\\\\server\\share\\@M', 'C:\\..\\..\\@M',
  '/tmp/@M', 'a\0b', 'a\nb', 'a\rb', '/', '', ' ', 'é'.repeat(130), 'x'.repeat(260), '/%2e%2e/@M', '--..--', '/a:b/c',
]
export const TERMINALS = ['term-1', 'term.2', '../@M', '..', '.', 'a/b', 'x'.repeat(129), 'x'.repeat(128), '\0', '', '-', 'a b']
export const CONTENT_TYPES = [
  'application/json', 'application/json; charset=utf-8', 'application/json; charset=utf-16', 'text/plain',
  'application/x-ndjson', 'application/jsonl', 'application/octet-stream', 'image/png', 'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded', 'application/problem+json', '*/*', 'garbage', '', 'application/json;;;',
]
/** Mutation kinds; `deep` nests a body 100–20,000 levels deep, `big` makes it ~0.6 MB. */
export const MUTATIONS = [
  'segment', 'query', 'body-json', 'body-field', 'body-trunc', 'body-bytes', 'content-type', 'header', 'method', 'deep', 'proto', 'big',
]
export const ENTRY_TYPES = ['message', 'custom', 'custom_message', 'label', 'model_change', 'thinking_level_change', 'compaction',
  'branch_summary', 'ttsr_injection', 'session_init', 'mode_change', 'session', 'nope']

/** A custom entry whose `data` nests `depth` arrays or objects; unbalanced = invalid JSON. */
export function deepBody (depth: number, balanced: boolean, objects: boolean): string {
  const [open, close] = objects ? ['{"a":', '}'] : ['[', ']']
  const inner = objects ? '1' : ''
  return `{"type":"custom","customType":"deep","data":${open.repeat(depth)}${inner}${balanced ? close.repeat(depth) : ''}}`
}

export function truncate (body: string | Buffer, length: number): string | Buffer {
  return typeof body === 'string' ? body.slice(0, length) : body.subarray(0, length)
}

export function decodeSafe (s: string): string {
  try { return decodeURIComponent(s) } catch { return s }
}

/** Queries no route expects: negative, fractional, huge, repeated, array-style, encoded NULs. */
export const ODD_QUERIES = ['after=-1', 'after=abc', 'limit=0', 'limit=1001', 'limit=1.5', 'limit=1e309',
  'after=99999999999999999999', 'after=1&after=2', 'limit[]=3', 'blobs=xyz', 'blobs=ref', 'includeEmpty=maybe', 'newId=1', '%00=%00']

/** Bodies that try prototype pollution. */
export const PROTO_BODIES = [
  '{"__proto__":{"polluted":1},"type":"custom","customType":"p"}',
  '{"constructor":{"prototype":{"polluted":1}},"cwd":"/p"}',
  '{"entries":[{"type":"custom","customType":"p","data":{"__proto__":{"x":1}}}]}',
  '{"title":{"toString":1}}',
]

/** ~0.6 MB bodies: one string over MAX_PERSIST_CHARS, or a batch of 1,000 entries. */
export function bigBody (oneString: boolean): string {
  return oneString
    ? JSON.stringify({ type: 'message', message: { role: 'assistant', content: [{ type: 'text', text: 'y'.repeat(600_000) }] } })
    : JSON.stringify({ entries: Array.from({ length: 1000 }, (_, i) => ({ type: 'custom', customType: 'many', data: i })) })
}
