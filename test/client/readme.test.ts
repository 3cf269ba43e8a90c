/**
 * The README's SDK example type-checks and runs as written: its code block is saved as a module
 * that imports the client from this checkout's source, checked with the project's compiler
 * options, and run with tsx against a real server whose address it reads from SESSION_STORE_URL.
 */
import { execFile } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listenTestServer, tempDataDir, type TestServer } from './helpers.js'

const ROOT = join(import.meta.dirname, '..', '..')
const README = readFileSync(join(ROOT, 'README.md'), 'utf8')

/** The first `ts` block of the `## SDK` section. */
function sdkExample (): string {
  const start = README.indexOf('\n## SDK\n')
  const end = README.indexOf('\n## ', start + 1)
  const section = README.slice(start, end === -1 ? undefined : end)
  return /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? ''
}

let server: TestServer
const temp = tempDataDir('ss-client-readme-')
const file = join(temp.dir, 'sdk-example.mts')
beforeAll(async () => {
  // `.js` resolves to the `.ts` source for both the compiler and tsx.
  const client = join(ROOT, 'src', 'client', 'index.js')
  writeFileSync(file, sdkExample().replaceAll("'session-store/client'", `'${client}'`))
  server = await listenTestServer()
})
afterAll(async () => {
  await server.close()
  temp.remove()
})

describe('README SDK example', () => {
  it('imports the package client entry point', () => {
    expect(sdkExample()).toContain("from 'session-store/client'")
  })

  it('type-checks with the project options', () => {
    const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })
    const program = ts.createProgram([file], { ...config?.options, noEmit: true })
    const messages = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
    expect(messages).toEqual([])
  })

  it('creates a session, appends, reads the context and follows the stream, as written', async () => {
    // Asynchronous on purpose: the server answering the example runs in this process.
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', file], {
      cwd: ROOT,
      env: { ...process.env, SESSION_STORE_URL: server.baseUrl },
      timeout: 20_000,
    })
    expect(stdout.trim().split('\n')).toEqual(['user -> assistant openai/gpt-4o', '#1 message', '#2 message', '#3 custom'])
  })
})
