import { describe, expect, it } from 'vitest'
import { loadConfig } from '../src/config.js'

describe('loadConfig', () => {
  it('applies the defaults of API.md, resolving DATA_DIR against cwd', () => {
    expect(loadConfig({}, '/srv/app')).toEqual({
      port: 8787,
      host: '127.0.0.1',
      dataDir: '/srv/app/data',
      storage: 'disk',
      logLevel: 'info',
      bodyLimit: 67_108_864,
      maxOpenSessions: 1000,
    })
  })

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '0', HOST: '0.0.0.0', DATA_DIR: '/var/lib/ss', STORAGE: 'memory',
      LOG_LEVEL: 'debug', BODY_LIMIT: '1024', MAX_OPEN_SESSIONS: '5',
    }, '/srv/app')
    expect(config).toEqual({
      port: 0, host: '0.0.0.0', dataDir: '/var/lib/ss', storage: 'memory',
      logLevel: 'debug', bodyLimit: 1024, maxOpenSessions: 5,
    })
  })

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', STORAGE: '' }, '/x')).toMatchObject({ port: 8787, storage: 'disk' })
  })

  it('refuses STORAGE=postgres with a clear message', () => {
    expect(() => loadConfig({ STORAGE: 'postgres' })).toThrow("STORAGE: 'postgres' is not available yet")
  })

  it.each([
    ['PORT', '65536'], ['PORT', '-1'], ['PORT', '80x'], ['PORT', '1.5'],
    ['BODY_LIMIT', '0'], ['BODY_LIMIT', 'lots'], ['MAX_OPEN_SESSIONS', '0'],
    ['STORAGE', 'sqlite'], ['LOG_LEVEL', 'verbose'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(expect.objectContaining({
      code: 'SS_INVALID_CONFIG', message: expect.stringMatching(new RegExp(`^${name}: `)),
    }))
  })
})
