/** Polling for a condition that another process, socket or timer makes true. */

/** Polls `condition` every 25 ms until it holds; throws with `what` after `timeoutMs`. */
export async function waitUntil (condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}
