import { Type } from '@sinclair/typebox'

export const Metrics = {
  tags: ['health'],
  summary: 'Prometheus metrics: requests, appends, commits, streams, sessions, storage',
  response: {
    200: {
      description: 'The Prometheus text exposition format (version 0.0.4)',
      content: { 'text/plain': { schema: Type.String() } },
    },
  },
}
