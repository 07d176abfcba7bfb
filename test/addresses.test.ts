import { describe, expect, test } from 'bun:test'
import { isPrivateAddress } from '../src/modules/webhooks/addresses.ts'

// SERVICE_WEBHOOK_BLOCK_PRIVATE refuses every one of these; classification only, nothing is contacted.
describe('addresses a webhook may not reach when private targets are blocked', () => {
  test.each([
    ['loopback', '127.0.0.1'],
    ['loopback, anywhere in 127/8', '127.255.0.9'],
    ['unspecified', '0.0.0.0'],
    ['"this network"', '0.1.2.3'],
    ['private 10/8', '10.0.0.1'],
    ['private 172.16/12, low end', '172.16.0.1'],
    ['private 172.16/12, high end', '172.31.255.254'],
    ['private 192.168/16', '192.168.1.1'],
    ['link-local (cloud metadata)', '169.254.169.254'],
    ['carrier-grade NAT, low end', '100.64.0.1'],
    ['carrier-grade NAT, high end', '100.127.255.254'],
    ['multicast', '224.0.0.1'],
    ['broadcast', '255.255.255.255'],
    ['IPv6 loopback', '::1'],
    ['IPv6 loopback, written out', '0:0:0:0:0:0:0:1'],
    ['IPv6 unspecified', '::'],
    ['IPv6 link-local', 'fe80::1'],
    ['IPv6 link-local with a zone', 'fe80::1%eth0'],
    ['IPv6 unique-local fc00::/7', 'fd12:3456:789a::1'],
    ['IPv6 unique-local, fc half', 'fc00::1'],
    ['IPv6 multicast', 'ff02::1'],
    ['IPv4-mapped loopback', '::ffff:127.0.0.1'],
    ['IPv4-mapped loopback, hex form', '::ffff:7f00:1'],
    ['IPv4-mapped private', '::ffff:10.1.2.3'],
    ['IPv4-mapped link-local', '::ffff:169.254.169.254'],
    ['IPv4-compatible loopback', '::127.0.0.1'],
    ['NAT64 of a private address', '64:ff9b::10.0.0.1'],
    ['bracketed IPv6 loopback', '[::1]'],
    ['not an address at all', 'localhost'],
  ])('%s: %s', (_, address) => {
    expect(isPrivateAddress(address)).toBe(true)
  })
})

describe('public addresses stay reachable', () => {
  test.each([
    ['public IPv4', '93.184.216.34'],
    ['just below 10/8', '9.255.255.255'],
    ['just above 10/8', '11.0.0.0'],
    ['just below 172.16/12', '172.15.255.255'],
    ['just above 172.16/12', '172.32.0.0'],
    ['just below CGNAT', '100.63.255.255'],
    ['just above CGNAT', '100.128.0.0'],
    ['just above 169.254/16', '169.255.0.1'],
    ['public IPv6', '2606:2800:220:1:248:1893:25c8:1946'],
    ['IPv4-mapped public', '::ffff:93.184.216.34'],
    ['NAT64 of a public address', '64:ff9b::93.184.216.34'],
  ])('%s: %s', (_, address) => {
    expect(isPrivateAddress(address)).toBe(false)
  })
})
