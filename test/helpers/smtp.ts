import { createServer, type AddressInfo, type Socket } from 'node:net'
import { SMTPServer } from 'smtp-server'

export interface ReceivedMessage {
  to: string
  subject: string
  text: string
  html: string
}

export interface SmtpPeer {
  port: number
  /** Every message received so far, in order. */
  messages: ReceivedMessage[]
  /** The next message not yet taken by an earlier call (waits for it, 10 s at most). */
  nextMessage: () => Promise<ReceivedMessage>
  /** The server answers the next message 550 once its data is in, and keeps nothing of it. */
  refuseNext: () => void
  close: () => Promise<void>
}

type Headers = Map<string, string>

function splitEntity (raw: string): { headers: Headers, body: string } {
  const at = raw.indexOf('\r\n\r\n')
  const head = at === -1 ? raw : raw.slice(0, at)
  const body = at === -1 ? '' : raw.slice(at + 4)
  const headers: Headers = new Map()
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':')
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim())
  }
  return { headers, body }
}

function decodeQuotedPrintable (value: string): string {
  const bytes: number[] = []
  const text = value.replace(/=\r\n/g, '')
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '=' && /^[0-9A-F]{2}$/i.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16))
      i += 2
    } else {
      bytes.push(...Buffer.from(text[i] as string, 'utf8'))
    }
  }
  return Buffer.from(bytes).toString('utf8')
}

function decodeBody (headers: Headers, body: string): string {
  const encoding = (headers.get('content-transfer-encoding') ?? '7bit').toLowerCase()
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(body)
  return body
}

/** RFC 2047 encoded words, as nodemailer writes non-ASCII subjects. */
function decodeWords (value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([BQ])\?([^?]*)\?=/gi, (_whole, _charset: string, kind: string, data: string) => kind.toUpperCase() === 'B'
      ? Buffer.from(data, 'base64').toString('utf8')
      : decodeQuotedPrintable(data.replace(/_/g, ' ')))
}

/** Walks the MIME tree for the text/plain and text/html parts. */
function collectParts (raw: string, found: { text: string, html: string }): void {
  const { headers, body } = splitEntity(raw)
  const type = headers.get('content-type') ?? 'text/plain'
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1]
  if (type.toLowerCase().startsWith('multipart/') && boundary !== undefined) {
    const parts = body.split(`--${boundary}`).slice(1)
    for (const part of parts) {
      if (part.startsWith('--')) break
      collectParts(part.replace(/^\r\n/, '').replace(/\r\n$/, ''), found)
    }
    return
  }
  if (type.toLowerCase().startsWith('text/html')) found.html = decodeBody(headers, body)
  else if (type.toLowerCase().startsWith('text/plain')) found.text = decodeBody(headers, body)
}

function parseMessage (to: string, raw: string): ReceivedMessage {
  const found = { text: '', html: '' }
  // the line break before the end-of-data dot belongs to the transfer, not to the body
  collectParts(raw.replace(/\r\n$/, ''), found)
  return { to, subject: decodeWords(splitEntity(raw).headers.get('subject') ?? ''), ...found }
}

/** A real SMTP server (the `smtp-server` package) on 127.0.0.1 at a free port. */
export async function startSmtp (): Promise<SmtpPeer> {
  const messages: ReceivedMessage[] = []
  const waiting: Array<() => void> = []
  let taken = 0
  let refusals = 0

  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData (stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        if (refusals > 0) {
          refusals--
          callback(Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }))
          return
        }
        const to = session.envelope.rcptTo.map(r => r.address).join(', ')
        messages.push(parseMessage(to, Buffer.concat(chunks).toString('utf8')))
        for (const wake of waiting.splice(0)) wake()
        callback()
      })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.server.address() as AddressInfo).port

  const nextMessage = async (): Promise<ReceivedMessage> => {
    const index = taken++
    const deadline = Date.now() + 10_000
    while (messages[index] === undefined) {
      if (Date.now() > deadline) throw new Error('no mail arrived within 10 s')
      await new Promise<void>((resolve) => {
        waiting.push(resolve)
        setTimeout(resolve, 250).unref()
      })
    }
    return messages[index]
  }

  return {
    port,
    messages,
    nextMessage,
    refuseNext: () => { refusals++ },
    close: async () => { await new Promise<void>((resolve) => server.close(() => resolve())) }
  }
}

/** A stalled mail server: `port`, how many clients it has seen, and `close` (ends every connection). */
export interface StalledPeer {
  port: number
  connections: () => number
  close: () => Promise<void>
}

/** A TCP server on 127.0.0.1 that accepts and never says a word: an SMTP server stalled before its greeting. */
export async function startSilentSmtp (): Promise<StalledPeer> {
  const sockets = new Set<Socket>()
  let seen = 0
  const server = createServer((socket) => {
    seen++
    sockets.add(socket)
    socket.on('error', () => {})
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => seen,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

/** A real SMTP server (`smtp-server`) that greets and takes the envelope, then never answers after DATA. */
export async function startStallingSmtp (): Promise<StalledPeer> {
  let seen = 0
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    // closing does not wait for the stalled sessions
    closeTimeout: 10,
    onConnect (_session, callback) {
      seen++
      callback()
    },
    onData (stream) {
      // reads the message and never calls back: no 250, no error
      stream.resume()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.server.address() as AddressInfo).port,
    connections: () => seen,
    close: async () => { await new Promise<void>((resolve) => server.close(() => resolve())) }
  }
}
