/**
 * The agent's blob directory (`<agent-dir>/blobs/<sha256>`, where oh-my-pi keeps the images its
 * session lines refer to as `blob:sha256:<hex>`) against the server's blob store: `sync` uploads
 * what a line refers to before the line, `pull` fetches what a file refers to.
 */
import { access, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { SessionStoreClient } from '../client/index.js'
import { blobHashes, writeAtomically } from './agent-files.js'

/** Uploads the blobs text refers to, each once per run. */
export class BlobSender {
  readonly #client: SessionStoreClient
  readonly #dir: string
  readonly #sent = new Set<string>()

  constructor (client: SessionStoreClient, dir: string) {
    this.#client = client
    this.#dir = dir
  }

  /**
   * Makes sure the server holds every blob `text` refers to that the agent's blob directory has
   * (a ref whose blob the agent lacks stays a ref, as it does in the agent).
   */
  async send (text: string): Promise<void> {
    for (const hash of blobHashes(text)) {
      if (this.#sent.has(hash)) continue
      let bytes: Buffer
      try {
        bytes = await readFile(join(this.#dir, hash))
      } catch {
        continue
      }
      if (!await this.#client.hasBlob(hash)) await this.#client.putBlob(hash, bytes)
      this.#sent.add(hash)
    }
  }
}

/** Fetches every blob `text` refers to into `dir` that is not there yet; returns how many it fetched. */
export async function fetchBlobs (client: SessionStoreClient, text: string, dir: string): Promise<number> {
  let fetched = 0
  for (const hash of blobHashes(text)) {
    const path = join(dir, hash)
    if (await exists(path)) continue
    if (!await client.hasBlob(hash)) continue
    await writeAtomically(path, (await client.getBlob(hash)).bytes)
    fetched++
  }
  return fetched
}

async function exists (path: string): Promise<boolean> {
  try {
    await access(path)
    return true
  } catch {
    return false
  }
}
