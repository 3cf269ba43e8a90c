/** `npm run deps:doc`: writes docs/dependencies.md from package.json and package-lock.json. */
import { mkdir, writeFile } from 'node:fs/promises'
import { currentDependencies, DEPENDENCIES_DOC } from './dependencies.js'

await mkdir(new URL('.', DEPENDENCIES_DOC), { recursive: true })
await writeFile(DEPENDENCIES_DOC, await currentDependencies())
process.stdout.write(`wrote ${DEPENDENCIES_DOC.pathname}\n`)
