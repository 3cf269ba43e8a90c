/**
 * Who gets a place among the open connections: the per-address cap, the total cap, and the
 * newcomer from a less busy address that takes the place of the busiest address's oldest socket.
 */
import { describe, expect, it } from 'vitest'
import { ConnectionTable } from '../../src/http/connection-table.js'
import { connectionCaps, parseDescriptorLimit, RESERVED_DESCRIPTORS } from '../../src/http/descriptor-limit.js'

describe('ConnectionTable', () => {
  it('refuses an address beyond its cap and takes it again once one of its sockets left', () => {
    const table = new ConnectionTable<string>({ total: 0, perClient: 2 })
    expect(table.admit('a', 'a1')).toEqual({ admitted: true })
    expect(table.admit('a', 'a2')).toEqual({ admitted: true })
    expect(table.admit('a', 'a3')).toEqual({ admitted: false, reason: 'per-client' })
    expect(table.admit('b', 'b1')).toEqual({ admitted: true })
    table.remove('a', 'a1')
    table.remove('a', 'a1') // twice: nothing more happens
    expect(table.size).toBe(2)
    expect(table.admit('a', 'a4')).toEqual({ admitted: true })
  })

  it('at the total cap, gives a less busy address the place of the busiest one\'s oldest socket', () => {
    const table = new ConnectionTable<string>({ total: 4, perClient: 0 })
    for (const s of ['a1', 'a2', 'a3']) table.admit('a', s)
    table.admit('b', 'b1')
    expect(table.admit('c', 'c1')).toEqual({ admitted: true, evicted: 'a1' })
    // a, b and c hold 2, 1 and 1: a place taken from a would only move the refusal to it.
    expect(table.admit('c', 'c2')).toEqual({ admitted: false, reason: 'total' })
    expect(table.admit('d', 'd1')).toEqual({ admitted: true, evicted: 'a2' })
    expect(table.admit('e', 'e1')).toEqual({ admitted: false, reason: 'total' })
    expect([table.size, table.heldBy('a'), table.heldBy('b'), table.heldBy('c'), table.heldBy('d')]).toEqual([4, 1, 1, 1, 1])
  })

  it('never evicts for the busiest address itself', () => {
    const table = new ConnectionTable<string>({ total: 2, perClient: 0 })
    table.admit('a', 'a1')
    table.admit('a', 'a2')
    expect(table.admit('a', 'a3')).toEqual({ admitted: false, reason: 'total' })
    expect(table.heldBy('a')).toBe(2)
  })
})

describe('connection caps from the descriptor limit', () => {
  const limits = 'Limit                     Soft Limit           Hard Limit           Units     \n' +
    'Max open files            256                  4096                 files     \n'

  it('reads the soft limit from /proc/<pid>/limits', () => {
    expect(parseDescriptorLimit(limits)).toBe(256)
    expect(parseDescriptorLimit(limits.replace('256 ', 'unlimited '))).toBeUndefined()
    expect(parseDescriptorLimit('')).toBeUndefined()
  })

  it('keeps the total to half of what the reserve leaves, and one address to half of that', () => {
    const budget = (256 - RESERVED_DESCRIPTORS) / 2
    expect(connectionCaps({ total: 2048, perClient: 256 }, 256)).toEqual({ total: budget, perClient: budget / 2 })
    expect(connectionCaps({ total: 0, perClient: 0 }, 256)).toEqual({ total: budget, perClient: 0 })
    expect(connectionCaps({ total: 10, perClient: 256 }, 256)).toEqual({ total: 10, perClient: 5 })
    expect(connectionCaps({ total: 2048, perClient: 256 }, 1_048_576)).toEqual({ total: 2048, perClient: 256 })
    expect(connectionCaps({ total: 2048, perClient: 256 }, undefined)).toEqual({ total: 2048, perClient: 256 })
    expect(connectionCaps({ total: 0, perClient: 0 }, undefined)).toEqual({ total: 0, perClient: 0 })
    // A limit below the reserve still lets a couple of connections in.
    expect(connectionCaps({ total: 0, perClient: 8 }, 20)).toEqual({ total: 2, perClient: 1 })
  })
})

describe('ConnectionTable evictions', () => {
  it('take the busiest address\'s oldest idle socket before one that serves a request', () => {
    const busy = new Set(['a1', 'a2'])
    const table = new ConnectionTable<string>({ total: 3, perClient: 0 }, (s) => !busy.has(s))
    for (const s of ['a1', 'a2', 'a3']) table.admit('a', s)
    expect(table.admit('b', 'b1')).toEqual({ admitted: true, evicted: 'a3' })
    // Only busy sockets left at the busiest address: its oldest gives way.
    expect(table.admit('c', 'c1')).toEqual({ admitted: true, evicted: 'a1' })
  })
})
