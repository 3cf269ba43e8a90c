/** One numbered schema migration (schema.ts lists them; migrate.ts applies them). */
export interface Migration {
  version: number
  name: string
  sql: string
}
