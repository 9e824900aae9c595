import { connect, createServer, type AddressInfo, type Socket } from 'node:net'

/** A loopback TCP proxy in front of a real server, which can stop passing the clients' bytes on. */
export interface StallProxy {
  port: number
  /**
   * From now on the clients' bytes are held, not sent to the server (new
   * connections too): to its clients the server stalls, answering nothing
   * more, while the server itself is never paused.
   */
  stall: () => void
  /** Sends what was held, and passes bytes on again. */
  resume: () => void
  /** Ends every connection and the proxy. */
  close: () => Promise<void>
}

/** Starts a proxy from a spare loopback port to `host:port`. */
export async function startStallProxy (port: number, host = '127.0.0.1'): Promise<StallProxy> {
  let stalled = false
  const sockets = new Set<Socket>()
  // what each upstream connection has not been sent yet
  const held = new Map<Socket, Buffer[]>()
  const server = createServer((client) => {
    const upstream = connect(port, host)
    sockets.add(client).add(upstream)
    held.set(upstream, [])
    const end = (): void => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
      held.delete(upstream)
    }
    client.on('data', (chunk) => {
      if (stalled) held.get(upstream)?.push(chunk)
      else upstream.write(chunk)
    })
    upstream.on('data', (chunk) => { client.write(chunk) })
    client.on('close', end).on('error', end)
    upstream.on('close', end).on('error', end)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    stall: () => { stalled = true },
    resume: () => {
      stalled = false
      for (const [upstream, chunks] of held) {
        for (const chunk of chunks.splice(0)) upstream.write(chunk)
      }
    },
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => { resolve() }))
    }
  }
}
