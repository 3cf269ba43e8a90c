/**
 * A problem's detail never names a path of the server: the errors whose messages carry a session
 * file's path (a move onto an existing file, a session file of a newer or invalid version, a
 * fork source that is no session file, a path outside DATA_DIR) answer fixed sentences, and any
 * other client error that quotes DATA_DIR, the token file or the code's directory has it cut out.
 */
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import {
  ForkSourceInvalid, InvalidArgument, MoveDestinationExists, PathOutsideDataDir, SessionVersionInvalid, SessionVersionTooNew,
} from '../../src/errors.js'
import { toProblemFacts } from '../../src/plugins/problem.js'
import { buildTestApp } from '../helpers/app.js'
import { problemOf } from '../helpers/problem.js'

const FILE = '/srv/session-store/data/sessions/--work-p--/2026-01-01T00-00-00-000Z_abc.jsonl'

describe('problem details', () => {
  it('never carry the path of a session file', () => {
    for (const err of [
      new MoveDestinationExists(FILE), new SessionVersionTooNew(FILE, '4'), new SessionVersionInvalid(FILE, '"x"'),
      new ForkSourceInvalid(FILE, 'missing'), new PathOutsideDataDir(FILE),
    ]) {
      const facts = toProblemFacts(err)
      expect(facts.status, err.code).toBeLessThan(500)
      expect(facts.detail, err.code).toBeDefined()
      expect(facts.detail, err.code).not.toContain('/srv')
      expect(facts.detail, err.code).not.toContain('.jsonl')
    }
  })

  describe('over HTTP', () => {
    let app: App | undefined
    afterEach(async () => { await app?.close() })

    it('cut DATA_DIR, the token file and the code directory out of any other client error', async () => {
      app = await buildTestApp({ config: { dataDir: '/srv/session-store/data', authTokensFile: '/etc/session-store/tokens.json' } })
      const code = join(import.meta.dirname, '..', '..')
      app.get('/probe/paths', async () => {
        throw new InvalidArgument(`cannot read ${FILE}, /etc/session-store/tokens.json or ${join(code, 'src', 'app.ts')}`)
      })
      const res = await app.inject({ method: 'GET', url: '/probe/paths' })
      expect(problemOf(res)).toEqual({ status: 400, code: 'SS_INVALID_ARGUMENT' })
      const detail = res.json().detail as string
      expect(detail).toContain('cannot read')
      for (const path of ['/srv/session-store/data', '/etc/session-store', code]) expect(detail).not.toContain(path)
    })
  })
})
