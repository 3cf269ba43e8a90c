/**
 * The browser the dashboard's end-to-end test needs is there and starts. Without it this test
 * fails (and the e2e file fails in its set-up): a missing browser is never a skipped test.
 */
import { existsSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { CHROMIUM, launchChromium } from './browser.js'

describe('Chromium for the dashboard tests', () => {
  it('is installed and starts headless', async () => {
    expect(existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run does)`).toBe(true)
    const browser = await launchChromium()
    try {
      expect(browser.version()).toMatch(/^\d+\./)
    } finally {
      await browser.close()
    }
  }, 60_000)
})
