/**
 * The session-store SDK: a typed HTTP client for every route of API.md, live streams as
 * reconnecting async iterators, and `RemoteSessionManager`, the `SessionManager` API against a
 * server. Nothing of the server (Fastify, storage) is loaded by importing this module.
 */
export { createClient, SessionStoreClient, type AppendOptions, type LeafReadOptions } from './client.js'
export { isStoreError, SessionStoreError, UNEXPECTED_RESPONSE } from './errors.js'
export { RemoteSessionManager, type RemoteCreateOptions } from './remote-session-manager.js'
export { SseParser, type SseMessage } from './sse-parser.js'
export type { GlobalStreamEvent, SessionStreamEvent, SubscribeOptions } from './subscriptions.js'
export type {
  AgentMessage, AgentRecord, AppendResult, BlobInfo, BlobMode, BranchSummaryInput, BranchSummaryResult, CallOptions,
  ClientOptions, ContinueSessionInput, CreateSessionInput, EntriesPage, Entry, EntryFields, GcReport, LeafMove,
  ListSessionsQuery, MutationOptions, NewEntry, Problem, RecentSession, RecentSessionsQuery, RecordsResult, SearchHit,
  SearchOptions, SearchResults, Session, SessionContext, SessionHeader, SessionInfo, SessionList, TreeNode, TreeView,
  Usage,
} from './types.js'
export type { SessionTreeNode } from '../session/types.js'
