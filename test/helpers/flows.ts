/**
 * The flows without Fastify: a context built as the plugin builds it (the
 * same `buildContext`), on a memory store, memory users (alice seeded) and a
 * settable clock, with a recording logger; and a call as a route makes it.
 */
import { Messages } from '../../lib/i18n/messages.js'
import type { FastifyBaseLogger } from 'fastify'
import type { Call } from '../../lib/adapters/second-factor.js'
import type { HostPorts } from '../../lib/adapters/guard.js'
import { resolveSettings, type Settings } from '../../lib/config/settings.js'
import type { JwtLoginContext } from '../../lib/context/context.js'
import { buildContext } from '../../lib/http/context.js'
import type { JwtLoginEventMap, JwtLoginEventName, SettingsInput } from '../../lib/index.js'
import { MemoryStore } from '../../lib/store/memory.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, HS_SECRET, testClock } from './fixtures.js'

/** One log line as the flows wrote it. */
export interface LogLine { level: 'warn' | 'error', fields: unknown, message: string }

/** A logger that keeps its warn and error lines; the rest are dropped. */
function recordingLog (lines: LogLine[]): FastifyBaseLogger {
  const keep = (level: LogLine['level']) => (fields: unknown, message = '') => { lines.push({ level, fields, message }) }
  const none = (): void => {}
  const log = { level: 'info', fatal: none, error: keep('error'), warn: keep('warn'), info: none, debug: none, trace: none, silent: none, child: () => log }
  return log as unknown as FastifyBaseLogger
}

export interface FlowKit {
  ctx: JwtLoginContext
  users: MemoryUserAdapter
  store: MemoryStore
  clock: ReturnType<typeof testClock>
  settings: Settings
  log: LogLine[]
  /** A call as the gate makes it: these settings, an IP, started now. */
  call: (ip?: string) => Call
  /** Alice's id. */
  aliceId: number
}

/**
 * A flow context. `settings` is merged over an HS256 key at the top level;
 * `ports` adds the host's two-factor port, mailer or policy.
 */
export async function flowKit (settings: Partial<SettingsInput> = {}, ports: Omit<HostPorts, 'users'> = {}): Promise<FlowKit> {
  const clock = testClock()
  const store = new MemoryStore({ clock })
  const users = new MemoryUserAdapter()
  const alice = await users.addUser(ALICE)
  const resolved = resolveSettings({ tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, ...settings })
  const log: LogLine[] = []
  const ctx = await buildContext({ users, ...ports }, { log: recordingLog(log), cacheLimits: null, initial: resolved, store, clock, messages: new Messages() })
  return {
    ctx,
    users,
    store,
    clock,
    settings: resolved,
    log,
    call: (ip = '203.0.113.7') => ({ settings: resolved, ip, startedAt: clock() }),
    aliceId: users.toPublicUser(alice).ID
  }
}

/** Every payload of one audit event from now on, in the order emitted. */
export function collect<E extends JwtLoginEventName> (kit: Pick<FlowKit, 'ctx'>, event: E): Array<JwtLoginEventMap[E]> {
  const seen: Array<JwtLoginEventMap[E]> = []
  kit.ctx.events.on(event, (payload) => { seen.push(payload) })
  return seen
}
