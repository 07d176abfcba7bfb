/**
 * A loopback TCP proxy a test puts between intake and its PostgreSQL server,
 * standing in for a server that stops answering (SIGSTOP, a partition):
 * `freeze()` stops moving bytes in both directions and keeps every socket
 * open (new connections are accepted and held too); `thaw()` delivers what
 * was held and moves bytes again. Nothing is refused and nothing is closed,
 * so a client sees exactly what a frozen server shows it: silence.
 *
 * What a client sent before it hung up is still delivered at the thaw, as a
 * stopped server's kernel would have taken it: a COMMIT held by the freeze
 * reaches the server, and may commit after the client gave up on it.
 *
 * `strand()` stands in for a network that lost the connections open now
 * (a NAT that forgot them, a server replaced behind the same address): they
 * stay open and silent for good, while new connections work.
 */
import type { Socket, TCPSocketListener } from 'bun'

export interface FreezingProxy {
  /** The URL of `upstreamUrl` with its host and port replaced by the proxy's. */
  url: string
  port: number
  freeze(): void
  /** Freezes as soon as a client sends bytes holding `text` (a query's text: `COMMIT`), holding those bytes. */
  freezeWhen(text: string): void
  /** Whether it is frozen now. */
  readonly frozen: boolean
  /** The connections open now move no byte ever again (and stay open); new ones work. */
  strand(): void
  thaw(): void
  /** Connections open through it now. */
  readonly connections: number
  /** Closes the listener and every connection. */
  stop(): void
}

interface Side {
  /** Bytes for this side, held while frozen or while its socket cannot take them. */
  pending: Uint8Array[]
  socket?: Socket<Pair>
}

interface Pair {
  client: Side
  server: Side
  closed: boolean
  /** The client hung up while bytes for the server were held: the server gets them, then the end. */
  clientGone: boolean
  /** The same the other way. */
  serverGone: boolean
  /** Lost for good: nothing moves, nothing closes. */
  stranded: boolean
}

export async function startFreezingProxy(upstreamUrl: string): Promise<FreezingProxy> {
  const upstream = new URL(upstreamUrl)
  const upstreamPort = Number(upstream.port || 5432)
  const upstreamHost = upstream.hostname
  let frozen = false
  let trigger: Buffer | undefined
  const pairs = new Set<Pair>()

  /** Writes what `side` holds, as far as its socket takes it (and the proxy is not frozen). */
  function flush(side: Side) {
    if (side.socket?.data?.stranded) return
    while (!frozen && side.socket && side.pending.length > 0) {
      const chunk = side.pending[0]!
      const written = side.socket.write(chunk)
      if (written < chunk.length) {
        side.pending[0] = chunk.subarray(written)
        return
      }
      side.pending.shift()
    }
    const pair = side.socket?.data
    const gone = side === pair?.server ? pair.clientGone : pair?.serverGone
    if (pair && gone && side.pending.length === 0) close(pair)
  }
  const send = (side: Side, data: Uint8Array) => {
    side.pending.push(new Uint8Array(data))
    flush(side)
  }
  const close = (pair: Pair) => {
    if (pair.closed) return
    pair.closed = true
    pairs.delete(pair)
    pair.client.socket?.end()
    pair.server.socket?.end()
  }

  const listener: TCPSocketListener<Pair> = Bun.listen<Pair>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(client) {
        const pair: Pair = {
          client: { pending: [], socket: client },
          server: { pending: [] },
          closed: false,
          clientGone: false,
          serverGone: false,
          stranded: false,
        }
        client.data = pair
        pairs.add(pair)
        Bun.connect<Pair>({
          hostname: upstreamHost,
          port: upstreamPort,
          data: pair,
          socket: {
            open(server) {
              pair.server.socket = server
              if (pair.closed) server.end()
              else flush(pair.server)
            },
            data(_server, data) {
              send(pair.client, data)
            },
            drain() {
              flush(pair.server)
            },
            close() {
              // What the server sent before it closed is still delivered (after a thaw).
              if (frozen && pair.client.pending.length > 0) pair.serverGone = true
              else close(pair)
            },
            error() {
              close(pair)
            },
          },
        }).catch(() => close(pair))
      },
      data(client, data) {
        if (trigger && Buffer.from(data).includes(trigger)) {
          trigger = undefined
          frozen = true
        }
        send(client.data.server, data)
      },
      drain(client) {
        flush(client.data.client)
      },
      close(client) {
        const pair = client.data
        if (frozen && pair.server.pending.length > 0) pair.clientGone = true
        else close(pair)
      },
      error(client) {
        close(client.data)
      },
    },
  })

  const url = new URL(upstreamUrl)
  url.hostname = '127.0.0.1'
  url.port = String(listener.port)
  return {
    url: url.toString(),
    port: listener.port,
    freeze() {
      frozen = true
    },
    freezeWhen(text) {
      trigger = Buffer.from(text)
    },
    get frozen() {
      return frozen
    },
    strand() {
      for (const pair of pairs) pair.stranded = true
    },
    thaw() {
      frozen = false
      trigger = undefined
      for (const pair of pairs) {
        flush(pair.server)
        flush(pair.client)
      }
    },
    get connections() {
      return pairs.size
    },
    stop() {
      for (const pair of [...pairs]) close(pair)
      listener.stop(true)
    },
  }
}
