import { Type, type TSchema } from '@sinclair/typebox'
import { problemResponses } from '../src/errors.js'
import { ref } from '../src/schemas/ref.js'
// Named here so that declaration emit can spell the schema symbols of spread TypeBox objects.
import { Hint, Kind, OptionalKind, ReadonlyKind } from '@sinclair/typebox'

export const HealthStatus = Type.Object({ status: Type.Literal('ok') }, { $id: 'HealthStatus', additionalProperties: false })

/** The named bodies of this file, for `sharedSchemas()`. */
export const healthRouteComponents = (): TSchema[] => [HealthStatus]

export const Healthz = {
  operationId: 'health',
  tags: ['health'],
  summary: 'Liveness: answers while the process runs',
  description: 'Always `{"status":"ok"}` while the process runs; needs no credentials.',
  response: { 200: { ...ref(HealthStatus), description: 'Alive' } },
}

export const Readyz = {
  operationId: 'isReady',
  tags: ['health'],
  summary: 'Readiness: storage is writable and the session registry is ready',
  description: 'Proves the storage writable; 503 while it is not or while the server is overloaded or shutting down.',
  response: { 200: { ...ref(HealthStatus), description: 'Ready' }, ...problemResponses(503) },
}
