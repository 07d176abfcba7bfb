import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'

/**
 * Which addresses a webhook may not reach when SERVICE_WEBHOOK_BLOCK_PRIVATE
 * is on: anything that is not a public unicast address.
 */

const V4_BLOCKED: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata lives here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
]

function v4ToNumber(address: string): number {
  return address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0)
}

function isBlockedV4(address: string): boolean {
  const n = v4ToNumber(address)
  return V4_BLOCKED.some(([base, bits]) => {
    const size = 2 ** (32 - bits)
    const start = v4ToNumber(base)
    return n >= start && n < start + size
  })
}

/** The 8 groups of an IPv6 address as numbers (handles "::" and an embedded IPv4 tail). */
function v6Groups(address: string): number[] {
  let text = address.toLowerCase().replace(/%.*$/, '')
  const v4Tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (v4Tail) {
    const n = v4ToNumber(v4Tail[1]!)
    text = `${text.slice(0, -v4Tail[1]!.length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`
  }
  const [head = '', tail] = text.split('::')
  const headGroups = head ? head.split(':') : []
  const tailGroups = tail ? tail.split(':') : []
  const missing = tail === undefined ? 0 : 8 - headGroups.length - tailGroups.length
  return [...headGroups, ...Array(missing).fill('0'), ...tailGroups].map((g) => parseInt(g, 16))
}

function isBlockedV6(address: string): boolean {
  const g = v6Groups(address)
  const first = g[0]!
  if (g.every((x) => x === 0)) return true // :: unspecified
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return true // ::1 loopback
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d): judge the IPv4 inside.
  const embedsV4 =
    (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0)) ||
    (first === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0))
  if (embedsV4) return isBlockedV4(`${g[6]! >> 8}.${g[6]! & 0xff}.${g[7]! >> 8}.${g[7]! & 0xff}`)
  if ((first & 0xfe00) === 0xfc00) return true // fc00::/7 unique-local
  if ((first & 0xffc0) === 0xfe80) return true // fe80::/10 link-local
  if ((first & 0xffc0) === 0xfec0) return true // fec0::/10 site-local (deprecated)
  if ((first & 0xff00) === 0xff00) return true // multicast
  if (first === 0x2001 && g[1] === 0x0db8) return true // documentation
  return false
}

/** True for loopback, private, link-local, unique-local, CGNAT, unspecified and similar addresses, mapped forms included. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address.replace(/^\[|\]$/g, ''))
  if (family === 4) return isBlockedV4(address)
  if (family === 6) return isBlockedV6(address.replace(/^\[|\]$/g, ''))
  return true // not an address at all: never connect to it on trust
}

export type Resolver = (hostname: string) => Promise<string[]>

/** Every address the system resolver gives for a host name. */
export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address)
