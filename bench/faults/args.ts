/**
 * Command-line flags of the long fault runs: `--name value` pairs, all optional.
 */

/** The value after `--name`, or `fallback`. */
export function flag (name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`)
  const value = i === -1 ? undefined : process.argv[i + 1]
  return value === undefined || value.startsWith('--') ? fallback : value
}

/** A numeric flag. */
export function numberFlag (name: string, fallback: number): number {
  const value = Number(flag(name, String(fallback)))
  if (!Number.isFinite(value)) throw new Error(`--${name} must be a number`)
  return value
}

/** Prints the problems (at most `max`) and sets a failing exit code when there are any. */
export function report (problems: readonly string[], max = 30): void {
  if (problems.length === 0) {
    console.log('result: PASS')
    return
  }
  console.log(`result: FAIL (${problems.length} problems)`)
  for (const p of problems.slice(0, max)) console.log(`  - ${p}`)
  process.exitCode = 1
}
