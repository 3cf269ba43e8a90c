/**
 * oh-my-pi's title line: the first line of its session files, exactly 256 bytes with its
 * newline (`{"type":"title","v":1,"title",["source",]"updatedAt","pad"}`), so that a rename
 * rewrites only those bytes. Written here as oh-my-pi writes it.
 */

/** A title change as oh-my-pi's storage passes it. */
export interface TitleUpdate {
  title?: string
  source?: 'auto' | 'user'
  updatedAt: string
}

const SLOT_BYTES = 256

function line (title: string, update: TitleUpdate, pad: string): string {
  const slot = update.source === undefined
    ? { type: 'title', v: 1, title, updatedAt: update.updatedAt, pad }
    : { type: 'title', v: 1, title, source: update.source, updatedAt: update.updatedAt, pad }
  return JSON.stringify(slot) + '\n'
}

/** The title line of `update`: the longest prefix of the title (in code points) that fits. */
export function titleLine (update: TitleUpdate): string {
  const points = [...(update.title ?? '')]
  let low = 0
  let high = points.length
  let best = ''
  while (low <= high) {
    const mid = (low + high) >>> 1
    const candidate = points.slice(0, mid).join('')
    if (Buffer.byteLength(line(candidate, update, ''), 'utf8') <= SLOT_BYTES) {
      best = candidate
      low = mid + 1
    } else {
      high = mid - 1
    }
  }
  const unpadded = line(best, update, '')
  return line(best, update, ' '.repeat(SLOT_BYTES - Buffer.byteLength(unpadded, 'utf8')))
}

/** `content` with its first 256 bytes replaced by the title line of `update`, as oh-my-pi overlays it. */
export function overlayTitleLine (content: string, update: TitleUpdate): string {
  const slot = Buffer.from(titleLine(update), 'utf8')
  const bytes = Buffer.from(content, 'utf8')
  if (bytes.length <= slot.length) return slot.toString('utf8')
  return Buffer.concat([slot, bytes.subarray(slot.length)]).toString('utf8')
}
