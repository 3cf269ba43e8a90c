/**
 * The Bun agent's session reader, `@oh-my-pi/pi-coding-agent`, installed once into
 * node_modules/.cache/omp-reader (from the npm registry, like every dependency) instead of
 * through the lock file: its `@oh-my-pi/pi-natives` lists optional platform packages that were
 * never published (`…-darwin-arm64` answers 404), and `npm ci` refuses every lock file that
 * holds it. The reader scripts are copied beside that install so that Bun resolves the package
 * from there. A failed install stops the run: the compatibility suite never silently skips it.
 */
import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dirname, '..', '..')
export const OMP_READER_VERSION = '18.2.3'
export const OMP_DIR = join(ROOT, 'node_modules', '.cache', 'omp-reader')
const READERS = join(ROOT, 'test', 'compat', 'readers')

/**
 * Versions held fixed in that install, whose tree npm otherwise resolves afresh: the registry
 * has `@babel/types` 7.29.17, which asks for an `@babel/helper-string-parser` ^7.29.17 it does
 * not have (so the newest match fails to install), while 7.29.15 installs.
 */
const OVERRIDES = { '@babel/types': '7.29.15' }

function installedVersion (): string | undefined {
  const manifest = join(OMP_DIR, 'node_modules', '@oh-my-pi', 'pi-coding-agent', 'package.json')
  return existsSync(manifest) ? (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version : undefined
}

export default function setup (): void {
  mkdirSync(OMP_DIR, { recursive: true })
  if (installedVersion() !== OMP_READER_VERSION) {
    writeFileSync(join(OMP_DIR, 'package.json'), JSON.stringify({ name: 'omp-reader', private: true, type: 'module', overrides: OVERRIDES }) + '\n')
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
    const res = spawnSync(npm, [
      'install', '--no-package-lock', '--no-save', '--no-audit', '--no-fund', '--loglevel=error',
      `@oh-my-pi/pi-coding-agent@${OMP_READER_VERSION}`,
    ], { cwd: OMP_DIR, encoding: 'utf8' })
    if (res.status !== 0 || installedVersion() !== OMP_READER_VERSION) {
      throw new Error(`could not install @oh-my-pi/pi-coding-agent@${OMP_READER_VERSION} into ${OMP_DIR}:\n${res.stdout}${res.stderr}`)
    }
  }
  for (const file of ['omp-reader.mjs', 'omp-backend.mjs', 'agent-driver.mjs', 'tree.mjs', 'write-every-kind.mjs']) copyFileSync(join(READERS, file), join(OMP_DIR, file))
}
