/**
 * Text as PostgreSQL takes it. A `text` value cannot hold NUL, and a lone surrogate becomes
 * U+FFFD on its way to UTF-8: what the store keeps of a client's text goes inside JSON, which
 * escapes both; a key that holds either cannot name a stored row at all.
 */

/** True when `text` can be sent as a `text` value unchanged. */
export function storable (text: string): boolean {
  return !text.includes('\0') && Buffer.from(text, 'utf8').toString('utf8') === text
}

/**
 * `items` as the SQL `text[]` parameter `$n`: joined by `"\n"` into one text and split in the
 * database, which costs far less than the driver's array encoding for thousands of JSON lines;
 * as an array when an item is empty or holds `"\n"`, which joining would lose.
 */
export function textArray (n: number, items: readonly string[]): { sql: string, value: string | readonly string[] } {
  return items.some((i) => i === '' || i.includes('\n'))
    ? { sql: `$${n}::text[]`, value: items }
    : { sql: `string_to_array($${n}::text, E'\\n')`, value: items.join('\n') }
}
