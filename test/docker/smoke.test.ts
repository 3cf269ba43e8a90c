/**
 * `docker/smoke.sh` against a stand-in for podman: the checks it makes of the image before
 * running it must fail for an image that breaks them. The real image is built and smoke-tested
 * with podman by .ci/run (docker/build.sh, then docker/smoke.sh).
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ROOT } from '../cli/helpers.js'

const temp = mkdtempSync(join(tmpdir(), 'ss-smoke-test-'))
afterAll(() => rmSync(temp, { recursive: true, force: true }))

/**
 * A podman that answers what smoke.sh asks of an image from FAKE_* variables, logs each call
 * to FAKE_LOG, and refuses to create the volume, where the running part would begin.
 */
const FAKE_PODMAN = `#!/usr/bin/env bash
echo "$*" >> "$FAKE_LOG"
case "$1 $2" in
  "info "*) [[ -z "$FAKE_INFO_FAILS" ]] || { echo "Error: $FAKE_INFO_FAILS" >&2; exit 125; } ;;
  "image exists") [[ -z "$FAKE_NO_IMAGE" ]] ;;
  "image inspect")
    case "$4" in
      *Size*) echo 278000000 ;;
      *Config.User*) echo "$FAKE_USER" ;;
      *HealthCheck*) echo "$FAKE_HEALTH" ;;
      *Config.Env*) printf '%b\\n' "$FAKE_ENV" ;;
    esac ;;
  "history "*) printf '%b\\n' "$FAKE_HISTORY" ;;
  "run "*) printf '%b' "$FAKE_LEFT" ;;
  "volume create") echo "fake podman: no volumes" >&2; exit 125 ;;
  *) exit 0 ;;
esac
`
const PODMAN = join(temp, 'podman')
writeFileSync(PODMAN, FAKE_PODMAN, { mode: 0o755 })

const GOOD = {
  FAKE_USER: 'node',
  FAKE_HEALTH: 'CMD node -e fetch(…)',
  FAKE_ENV: 'PATH=/usr/local/bin:/usr/bin\\nNODE_ENV=production\\nDATA_DIR=/data',
  FAKE_HISTORY: '/bin/sh -c #(nop) CMD ["serve"]\\n/bin/sh -c mkdir -p /data && chown node:node /data',
  FAKE_LEFT: '',
}

async function smoke (env: Record<string, string>): Promise<{ code: number | null, stdout: string, stderr: string, calls: string[] }> {
  const log = join(temp, `calls-${Math.random().toString(36).slice(2)}`)
  writeFileSync(log, '')
  const child = spawn('bash', [join(ROOT, 'docker', 'smoke.sh'), 'session-store'], {
    cwd: ROOT, env: { ...process.env, PODMAN_BIN: PODMAN, PODMAN_OPTS: '', FAKE_LOG: log, ...GOOD, ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const [code] = await once(child, 'close') as [number | null]
  return { code, stdout, stderr, calls: readFileSync(log, 'utf8').split('\n').filter((l) => l !== '') }
}

describe('docker/smoke.sh', () => {
  it('passes a sound image through its static checks, then goes on to run it', async () => {
    const res = await smoke({})
    expect(res.stdout).toContain('smoke: image session-store: 278 MB\n')
    expect(res.stdout).toContain('smoke: no npm registry, CA file or secret left in the image; USER node; HEALTHCHECK present\n')
    // The look inside the image runs a shell in it, with no network, and removes the container.
    expect(res.calls.find((c) => c.startsWith('run '))).toMatch(/^run --rm --ulimit nproc=\d+:\d+ --ulimit nofile=\d+:\d+ --network none --entrypoint sh session-store -c /)
    expect(res.calls).toContain('volume create ' + /volume create (ss-smoke-\d+)/.exec(res.calls.join('\n'))![1])
    expect(res.stderr).toContain('fake podman: no volumes')
    expect(res.code).not.toBe(0)
  })

  it('fails, saying so, when podman is missing or cannot run', async () => {
    const missing = await smoke({ PODMAN_BIN: join(temp, 'no-podman') })
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('podman is not installed')
    const broken = await smoke({ FAKE_INFO_FAILS: 'cannot set up cgroups' })
    expect(broken.code).toBe(1)
    expect(broken.stderr).toContain("podman cannot run here ('" + PODMAN + " info' failed):\nError: cannot set up cgroups")
    expect(broken.stderr).toContain('smoke: FAIL: podman cannot run')
  })

  it('fails when the image is not built', async () => {
    const res = await smoke({ FAKE_NO_IMAGE: '1' })
    expect(res.code).toBe(1)
    expect(res.stderr).toContain('smoke: FAIL: no image session-store (build it with docker/build.sh)')
  })

  it('fails for an image that runs as root', async () => {
    for (const user of ['', 'root', '0', '0:0']) {
      const res = await smoke({ FAKE_USER: user })
      expect(res.code).toBe(1)
      expect(res.stderr).toContain(`smoke: FAIL: the image runs as root (USER '${user}')`)
    }
  })

  it('fails for an image without a HEALTHCHECK (built in the OCI format)', async () => {
    const res = await smoke({ FAKE_HEALTH: '' })
    expect(res.code).toBe(1)
    expect(res.stderr).toContain('smoke: FAIL: the image has no HEALTHCHECK (build with --format docker)')
  })

  it('fails when the npm registry or CA reached the image: environment, history or an npmrc', async () => {
    const env = await smoke({ FAKE_ENV: 'PATH=/usr/bin\\nNPM_CONFIG_REGISTRY=https://npm.mirror.test/' })
    expect(env.code).toBe(1)
    expect(env.stderr).toContain("smoke: FAIL: the image's environment sets npm configuration")
    const history = await smoke({ FAKE_HISTORY: '|1 NPM_CONFIG_REGISTRY=https://npm.mirror.test/ /bin/sh -c npm ci' })
    expect(history.code).toBe(1)
    expect(history.stderr).toContain("smoke: FAIL: the image's history names the npm registry or CA")
    const npmrc = await smoke({ FAKE_LEFT: '/usr/local/etc/npmrc:cafile=/run/secrets/npm_ca\\n/run/secrets/npm_ca exists\\n' })
    expect(npmrc.code).toBe(1)
    expect(npmrc.stderr).toContain('smoke: FAIL: npm settings left in the image: /usr/local/etc/npmrc:cafile=/run/secrets/npm_ca')
  })
})
