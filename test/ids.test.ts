import { describe, expect, test } from 'bun:test'
import { decodeTime } from 'ulidx'
import { canonicalUlid, newId } from '../src/lib/ids.ts'

const BASE32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const randomPart = (id: string) => [...id.slice(10)].reduce((n, c) => n * 32n + BigInt(BASE32.indexOf(c)), 0n)

describe('ids', () => {
  test('are ULIDs of the current time, in strictly increasing order even within one millisecond', () => {
    const before = Date.now()
    const ids = Array.from({ length: 5000 }, newId)
    for (const id of ids) expect(canonicalUlid(id)).toBe(id)
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true)
    expect(decodeTime(ids[0]!)).toBeGreaterThanOrEqual(before)
    expect(decodeTime(ids.at(-1)!)).toBeLessThanOrEqual(Date.now() + 1)
  })

  test('a later id in the same millisecond is not the previous one plus a small step: a link cannot be guessed from another', () => {
    const ids = Array.from({ length: 5000 }, newId)
    let sameMillisecond = 0
    for (let i = 1; i < ids.length; i++) {
      if (ids[i]!.slice(0, 10) !== ids[i - 1]!.slice(0, 10)) continue
      sameMillisecond++
      // A monotonic ULID would step by exactly 1; ours steps by a random amount up to 2^64.
      expect(randomPart(ids[i]!) - randomPart(ids[i - 1]!)).toBeGreaterThan(1n << 20n)
    }
    expect(sameMillisecond).toBeGreaterThan(100)
  })
})
