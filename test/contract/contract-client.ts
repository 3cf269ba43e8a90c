/**
 * The typed OpenAPI client of the contract suite: openapi-fetch over the generated types, with
 * one middleware that checks every response against the document (openapi-validator.ts) and
 * records it for the coverage checks. A response the document does not declare rejects the
 * call, so every request made through this client is checked in this one place.
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch'
import type { paths } from './openapi-types.js'
import { Coverage, mediaTypeOf, responseProblems, type ObservedResponse } from './openapi-validator.js'

export type ContractClient = Client<paths>

/** A request the document did not describe the answer to. */
export class ContractViolation extends Error {
  override name = 'ContractViolation'
}

/** Reads a body for checking, except a live stream, which the test reads itself. */
async function bodyOf (response: Response, method: string): Promise<string | undefined> {
  if (method === 'HEAD' || mediaTypeOf(response.headers) === 'text/event-stream') return undefined
  return await response.clone().text()
}

function checker (coverage: Coverage): Middleware {
  return {
    async onResponse ({ request, response, schemaPath }) {
      const observed: ObservedResponse = {
        method: request.method,
        path: schemaPath,
        status: response.status,
        headers: response.headers,
        body: await bodyOf(response, request.method),
      }
      coverage.record(observed)
      const problems = responseProblems(observed)
      if (problems.length > 0) {
        throw new ContractViolation(`${request.method} ${new URL(request.url).pathname} → ${response.status}: ${problems.join('; ')}`)
      }
      return undefined
    },
  }
}

/** A client of `baseUrl` whose every response is checked and recorded in `coverage`. */
export function contractClient (baseUrl: string, coverage: Coverage, fetch?: (request: Request) => Promise<Response>): ContractClient {
  const client = createClient<paths>({ baseUrl, ...(fetch === undefined ? {} : { fetch }) })
  client.use(checker(coverage))
  return client
}

/** Options that send `body` as raw bytes or text, untouched, with this content type. */
export function raw (contentType: string): { bodySerializer: (body: unknown) => unknown, headers: Record<string, string> } {
  return { bodySerializer: (body) => body, headers: { 'content-type': contentType } }
}
