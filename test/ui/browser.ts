/**
 * Debian's Chromium driven by playwright-core: no browser download, the system binary only.
 * A missing Chromium is an error, never a skip (`.ci/run` installs it).
 */
import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'

/** The Chromium binary (`apt-get install chromium`); CHROMIUM_PATH overrides it. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** Headless and quiet: no GPU, no QUIC, no first-run, sync, updates or background traffic. */
const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
]

/** Launches Chromium with a fresh profile (playwright makes a new temporary user-data-dir per launch). */
export async function launchChromium (): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is missing at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (.ci/run does), or set CHROMIUM_PATH`)
  }
  return await chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 60_000 })
}
