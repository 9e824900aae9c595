import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'

export interface ReceivedMessage {
  /** The envelope recipients, joined with `, `. */
  to: string
  subject: string
  text: string
  html: string
  raw: string
}

export interface SmtpPeer {
  port: number
  messages: ReceivedMessage[]
  /** The next message to arrive (or the oldest one not yet taken). */
  nextMessage: () => Promise<ReceivedMessage>
  close: () => Promise<void>
}

function decodeBody (body: string, encoding: string | undefined): string {
  const kind = encoding?.trim().toLowerCase()
  if (kind === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
  if (kind === 'quoted-printable') {
    const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    return Buffer.from(bytes, 'latin1').toString('utf8')
  }
  return body
}

function splitPart (raw: string): { headers: Map<string, string>, body: string } {
  const at = raw.indexOf('\r\n\r\n')
  const head = at === -1 ? raw : raw.slice(0, at)
  const body = at === -1 ? '' : raw.slice(at + 4)
  const headers = new Map<string, string>()
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':')
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim())
  }
  return { headers, body }
}

/** Enough MIME for the messages nodemailer writes: text, html, multipart/alternative or mixed. */
function collectParts (raw: string, into: { text: string, html: string }): void {
  const { headers, body } = splitPart(raw)
  const type = headers.get('content-type') ?? 'text/plain'
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1]
  if (type.toLowerCase().startsWith('multipart/') && boundary !== undefined) {
    for (const part of body.split(`--${boundary}`).slice(1)) {
      if (part.startsWith('--')) break
      collectParts(part.replace(/^\r\n/, ''), into)
    }
    return
  }
  const decoded = decodeBody(body, headers.get('content-transfer-encoding'))
  if (type.toLowerCase().startsWith('text/html')) into.html += decoded
  else into.text += decoded
}

/** A real SMTP server on loopback (random port, no TLS, any login) that keeps what it receives. */
export async function startSmtp (): Promise<SmtpPeer> {
  const messages: ReceivedMessage[] = []
  const waiting: Array<(message: ReceivedMessage) => void> = []
  let taken = 0
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData (stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8')
        const parts = { text: '', html: '' }
        collectParts(raw, parts)
        const message: ReceivedMessage = {
          to: session.envelope.rcptTo.map(r => r.address).join(', '),
          subject: splitPart(raw).headers.get('subject') ?? '',
          text: parts.text,
          html: parts.html,
          raw
        }
        messages.push(message)
        const waiter = waiting.shift()
        if (waiter !== undefined) {
          taken++
          waiter(message)
        }
        callback()
      })
    }
  })
  server.listen(0, '127.0.0.1')
  await once(server.server, 'listening')
  const port = (server.server.address() as AddressInfo).port
  return {
    port,
    messages,
    nextMessage: async () => {
      if (taken < messages.length) return messages[taken++] as ReceivedMessage
      return await new Promise<ReceivedMessage>(resolve => { waiting.push(resolve) })
    },
    close: async () => { await new Promise<void>(resolve => { server.close(() => { resolve() }) }) }
  }
}
