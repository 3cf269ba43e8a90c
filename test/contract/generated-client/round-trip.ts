/**
 * A round trip through the client that `@hey-api/openapi-ts` generates from
 * openapi/openapi.json into `./client/` (git-ignored; generated-client.test.ts writes it, then
 * typechecks this file with it and runs it against a real server). Written as a user of the
 * generated client would: named calls, typed bodies, no casts of request bodies.
 */
import { createClient } from './client/client/index.js'
import {
  appendEntries, createSession, exportSession, getBlob, getContext, putBlob,
  type AppendEntriesBody, type NewEntry, type PostBlobData, type PutBlobData,
} from './client/index.js'

/** Compile-time checks that blob bodies are typed as bytes, not `unknown`. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
const blobBodiesAreBytes: [Equal<PutBlobData['body'], Blob | File>, Equal<PostBlobData['body'], Blob | File>] = [true, true]

export interface RoundTrip {
  sessionId: string
  appended: { firstSeq: number, lastSeq: number, persisted: boolean, types: string[] }
  contextRoles: string[]
  blob: { hash: string, ref: string, size: number, created: boolean }
  fetched: Uint8Array
  exportedLines: string[]
  blobBodiesAreBytes: typeof blobBodiesAreBytes
}

/** create → append batch → context → blob → export, against `baseUrl`. */
export async function roundTrip (baseUrl: string, bytes: Uint8Array<ArrayBuffer>, hash: string): Promise<RoundTrip> {
  const client = createClient({ baseUrl })
  const created = await createSession({ client, body: { cwd: '/generated-client' }, throwOnError: true })
  const sessionId = created.data.header.id

  const entries: NewEntry[] = [
    { type: 'message', message: { role: 'user', content: 'hello', timestamp: 1 } },
    { type: 'message', message: { role: 'assistant', content: [{ type: 'text', text: 'hi' }], timestamp: 2 } },
  ]
  const body: AppendEntriesBody = { entries, parentId: null }
  const appended = await appendEntries({ client, path: { id: sessionId }, body, throwOnError: true })

  const context = await getContext({ client, path: { id: sessionId }, throwOnError: true })

  const stored = await putBlob({ client, path: { hex: hash }, body: new Blob([bytes]), throwOnError: true })
  const fetched = await getBlob({ client, path: { hex: hash }, parseAs: 'arrayBuffer', throwOnError: true })

  const exported = await exportSession({ client, path: { id: sessionId }, parseAs: 'text', throwOnError: true })

  return {
    sessionId,
    appended: {
      firstSeq: appended.data.firstSeq,
      lastSeq: appended.data.lastSeq,
      persisted: appended.data.persisted,
      types: appended.data.entries.map((entry) => entry.type),
    },
    contextRoles: context.data.messages.map((message) => String((message as { role?: unknown }).role)),
    blob: { ...stored.data, created: stored.response.status === 201 },
    fetched: new Uint8Array(fetched.data as unknown as ArrayBuffer),
    exportedLines: String(exported.data).trim().split('\n'),
    blobBodiesAreBytes,
  }
}
