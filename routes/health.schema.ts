import { Type } from '@sinclair/typebox'
import { problemResponses } from '../src/errors.js'

const Ok = Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false })

export const Healthz = {
  tags: ['health'],
  summary: 'Liveness: answers while the process runs',
  response: { 200: Ok },
}

export const Readyz = {
  tags: ['health'],
  summary: 'Readiness: storage is writable and the session registry is ready',
  response: { 200: Ok, ...problemResponses(503) },
}
