import { Type } from '@sinclair/typebox'

export const Metrics = {
  operationId: 'getMetrics',
  tags: ['health'],
  summary: 'Prometheus metrics: requests, appends, commits, streams, sessions, storage',
  description: 'Counters, gauges and histograms of this process in the Prometheus text format; needs no credentials.',
  response: {
    200: {
      description: 'The Prometheus text exposition format (version 0.0.4)',
      content: { 'text/plain': { schema: Type.String() } },
    },
  },
}
