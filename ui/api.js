// Calls to the service's /v1 API from the page, with the tab's token.
import { getToken } from './token.js'

/** A non-2xx answer: `status` and the problem+json body (`code`, `detail`). */
export class ApiError extends Error {
  constructor (status, problem) {
    super(problem.detail ?? problem.title ?? `HTTP ${status}`)
    this.status = status
    this.code = problem.code
  }
}

const authHeaders = () => {
  const token = getToken()
  return token === '' ? {} : { authorization: `Bearer ${token}` }
}

/** JSON in and out; throws ApiError on a non-2xx answer. */
export async function api (path, { method = 'GET', body } = {}) {
  const headers = { accept: 'application/json', ...authHeaders() }
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  if (!res.ok) {
    const problem = await res.json().catch(() => ({}))
    throw new ApiError(res.status, problem)
  }
  return res.status === 204 ? undefined : await res.json()
}

/** `path?query` with undefined values left out. */
export function withQuery (path, query) {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== null) params.set(key, String(value))
  const text = params.toString()
  return text === '' ? path : `${path}?${text}`
}

/** A live stream's URL: EventSource cannot send headers, so the token goes in the query. */
export function streamUrl (path, query = {}) {
  const token = getToken()
  return withQuery(path, { ...query, access_token: token === '' ? undefined : token })
}

const BLOB_REF = /^blob:sha256:([0-9a-f]{64})$/
const blobUrls = new Map()

/**
 * A URL for an image block's `data`: a blob ref is fetched with the token (an <img> could not
 * send it) and shown from an object URL, cached per hash; inline base64 becomes a data: URL.
 */
export function imageUrl (data, mimeType) {
  const ref = BLOB_REF.exec(data)
  if (ref === null) return Promise.resolve(`data:${mimeType ?? 'image/png'};base64,${data}`)
  const hex = ref[1]
  let url = blobUrls.get(hex)
  if (url === undefined) {
    url = fetch(`/v1/blobs/sha256/${hex}`, { headers: authHeaders() }).then(async (res) => {
      if (!res.ok) throw new ApiError(res.status, {})
      return URL.createObjectURL(await res.blob())
    })
    url.catch(() => blobUrls.delete(hex))
    blobUrls.set(hex, url)
  }
  return url
}
