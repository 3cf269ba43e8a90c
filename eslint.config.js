import globals from 'globals'
import neostandard from 'neostandard'

export default [
  ...neostandard({
    ts: true,
    ignores: [
      'dist/**', 'node_modules/**', 'coverage/**', 'test/artifacts/**',
      // Generated: the OpenAPI types and the client the generator test writes.
      'test/contract/openapi-types.d.ts', 'test/contract/generated-client/client/**',
    ],
  }),
  {
    rules: {
      // Multi-line literals keep a trailing comma, single-line ones do not: both are the house style.
      '@stylistic/comma-dangle': ['error', 'only-multiline'],
      // `void promise` marks a promise deliberately left to run on its own.
      'no-void': ['error', { allowAsStatement: true }],
      // A variable a closure reads before its one assignment cannot be const.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // TypeBox's symbols are imported by name so that declaration emit can spell the schema types.
    files: ['routes/*.schema.ts'],
    rules: { '@typescript-eslint/no-unused-vars': ['error', { varsIgnorePattern: '^(Hint|Kind|OptionalKind|ReadonlyKind)$' }] },
  },
  {
    // The dashboard runs in the browser.
    files: ['ui/**/*.js'],
    languageOptions: { globals: globals.browser },
  },
]
