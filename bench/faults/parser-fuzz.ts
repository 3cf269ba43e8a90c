/**
 * Long form of test/faults/parser.fuzz.test.ts: the same fast-check properties of
 * parseJsonlLenient, with many more runs (time-bounded).
 *
 *   npx tsx bench/faults/parser-fuzz.ts [--runs 100000] [--seed N] [--max-seconds 100]
 */
import fc from 'fast-check'
import { PARSER_PROPERTIES } from '../../test/faults/support/parser-properties.js'
import { seedFromEnv } from '../../test/faults/support/prng.js'
import { numberFlag, report } from './args.js'

const runs = numberFlag('runs', 100_000)
const seed = numberFlag('seed', seedFromEnv())
const perProperty = numberFlag('max-seconds', 100) * 1000 / Object.keys(PARSER_PROPERTIES).length
const problems: string[] = []
for (const [name, property] of Object.entries(PARSER_PROPERTIES)) {
  const started = Date.now()
  const details = fc.check(property as fc.IRawProperty<unknown[], false>, { numRuns: runs, seed, interruptAfterTimeLimit: perProperty })
  const ms = Date.now() - started
  console.log(`${name}: ${details.numRuns} runs in ${ms} ms${details.interrupted ? ' (time limit)' : ''}, ${details.failed ? 'FAILED' : 'ok'}`)
  if (details.failed) {
    const why = details.errorInstance instanceof Error ? details.errorInstance.message.slice(0, 400) : ''
    problems.push(`${name}: seed ${details.seed}, path ${details.counterexamplePath}: ${JSON.stringify(details.counterexample)?.slice(0, 400)} ${why}`)
  }
}
console.log(`\nparser fuzz: seed ${seed}`)
report(problems)
