import { describe, expect, it } from 'vitest'
import { isEmptyContent, isValidHeader, JsonlStreamParser, parseJsonlLenient, titleSlotLine } from '../../src/session/parser.js'

const HEADER = '{"type":"session","version":3,"id":"s1","timestamp":"2026-03-14T15:04:07.123Z","cwd":"/w"}'
const MSG = (id: string) =>
  `{"type":"message","id":"${id}","parentId":null,"timestamp":"2026-03-14T15:04:09.412Z","message":{"role":"user","content":"hi"}}`

describe('parseJsonlLenient', () => {
  it('§12.11 a valid header plus one message line parses as 2 records', () => {
    const records = parseJsonlLenient(`${HEADER}\n${MSG('a')}\n`)
    expect(records).toHaveLength(2)
    expect(isValidHeader(records[0])).toBe(true)
    expect(records[1]).toMatchObject({ id: 'a', message: { role: 'user' } })
  })

  it('§12.11 a garbage line between valid lines is skipped', () => {
    const records = parseJsonlLenient(`${HEADER}\n{"type":"mess\n${MSG('a')}\n\u0000\u0000garbage\n${MSG('b')}\n`)
    expect(records.map((r) => r.id)).toEqual(['s1', 'a', 'b'])
  })

  it('§12.12 a file starting with a UTF-8 BOM loads its header', () => {
    const records = parseJsonlLenient(`\uFEFF${HEADER}\n${MSG('a')}\n`)
    expect(records).toHaveLength(2)
    expect(isValidHeader(records[0])).toBe(true)
  })

  it('§12.12 a CRLF file loads the same records as its LF version', () => {
    const lf = `${HEADER}\n${MSG('a')}\n\n${MSG('b')}\n`
    expect(parseJsonlLenient(lf.replaceAll('\n', '\r\n'))).toEqual(parseJsonlLenient(lf))
    expect(parseJsonlLenient(lf)).toHaveLength(3)
  })

  it('§12.13 a file cut inside its last line yields every earlier record', () => {
    const text = `${HEADER}\n${MSG('a')}\n${MSG('b')}`
    const cut = text.slice(0, text.length - 10)
    expect(parseJsonlLenient(cut).map((r) => r.id)).toEqual(['s1', 'a'])
  })

  it('§12.14 lines 42, "s", null, [1] and {"a":1}{"a":2} are skipped while neighbours load', () => {
    const text = [HEADER, '42', MSG('a'), '"s"', 'null', MSG('b'), '[1]', '{"a":1}{"a":2}', MSG('c')].join('\n')
    expect(parseJsonlLenient(text).map((r) => r.id)).toEqual(['s1', 'a', 'b', 'c'])
  })

  it('§12.14 a first record {"type":"session","id":5} is not a valid header', () => {
    const records = parseJsonlLenient('{"type":"session","id":5}\n')
    expect(records).toHaveLength(1)
    expect(isValidHeader(records[0])).toBe(false)
    expect(isValidHeader({ type: 'message', id: 's' })).toBe(false)
    expect(isValidHeader(undefined)).toBe(false)
    expect(isValidHeader({ type: 'session', id: '' })).toBe(true)
  })

  it('§5.1 each half of a pretty-printed object and whitespace-only lines are skipped', () => {
    const text = `${HEADER}\n{\n  "type": "message",\n  "id": "p"\n}\n   \t\n${MSG('a')}`
    expect(parseJsonlLenient(text).map((r) => r.id)).toEqual(['s1', 'a'])
  })

  it('§12.10 garbage only, or nothing, parses to no records', () => {
    expect(parseJsonlLenient('')).toEqual([])
    expect(parseJsonlLenient('\uFEFF')).toEqual([])
    expect(parseJsonlLenient('garbage\n\u0000\u0001\nmore garbage')).toEqual([])
  })

  it('§5.1 keeps leading and trailing JSON whitespace around an object', () => {
    expect(parseJsonlLenient(' \t{"a":1} \r\r\n')).toEqual([{ a: 1 }])
  })
})

describe('isEmptyContent', () => {
  it('§5.3 only a BOM plus spaces, tabs, CR and LF count as empty', () => {
    for (const t of ['', '\uFEFF', ' \t\r\n', '\uFEFF  \n\r\n\t']) expect(isEmptyContent(t), JSON.stringify(t)).toBe(true)
    for (const t of ['x', '\u00a0', '\n\uFEFF', '{}']) expect(isEmptyContent(t), JSON.stringify(t)).toBe(false)
  })
})

describe('an agent title slot before the header', () => {
  /** The agents' fixed 256-byte slot line. */
  const slot = (title: string, source?: string): string => {
    const make = (pad: string): string => JSON.stringify({ type: 'title', v: 1, title, ...(source === undefined ? {} : { source }), updatedAt: '2026-03-14T15:04:07.123Z', pad }) + '\n'
    return make(' '.repeat(256 - Buffer.byteLength(make(''))))
  }
  const header = JSON.stringify({ type: 'session', version: 3, id: 's1', timestamp: '2026-03-14T15:04:07.123Z', cwd: '/w', title: 'Old' }) + '\n'
  const entry = JSON.stringify({ type: 'message', id: 'a', parentId: null, timestamp: 't', message: { role: 'user', content: 'x' } }) + '\n'

  it('is folded into the header as the agents read it: its title wins, an empty one removes the header title', () => {
    const line = slot('Renamed', 'user')
    expect(Buffer.byteLength(line)).toBe(256)
    expect(parseJsonlLenient(line + header + entry)).toEqual([
      { type: 'session', version: 3, id: 's1', timestamp: '2026-03-14T15:04:07.123Z', cwd: '/w', title: 'Renamed', titleSource: 'user' },
      { type: 'message', id: 'a', parentId: null, timestamp: 't', message: { role: 'user', content: 'x' } },
    ])
    expect(parseJsonlLenient(slot('') + header)[0]).not.toHaveProperty('title')
    const parser = new JsonlStreamParser()
    parser.push(line + header)
    expect(parser.end()[0]).toMatchObject({ type: 'session', id: 's1', title: 'Renamed' })
    expect(parser.firstLine).toMatchObject({ type: 'session', id: 's1' })
    expect(titleSlotLine(line + header)).toBe(line)
    expect(titleSlotLine(header)).toBe('')
  })

  it('is an ordinary record when no valid header follows it or when it is not a slot', () => {
    expect(parseJsonlLenient(slot('T') + entry)[0]).toMatchObject({ type: 'title' })
    const notSlot = JSON.stringify({ type: 'title', v: 2, title: 'T', updatedAt: 'x', pad: '' }) + '\n'
    expect(parseJsonlLenient(notSlot + header)[0]).toMatchObject({ type: 'title', v: 2 })
  })
})
