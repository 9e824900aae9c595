/**
 * Our in-process and single-Redis stores through the published
 * StateStore suite, as an adapter author runs it (the cluster and
 * PostgreSQL run in files of their own, in parallel with this one).
 */
import { test } from 'tap'
import { stateStoreSuite } from '../../lib/conformance.js'
import { testClock } from '../helpers/app.js'
import { storePorts } from '../helpers/shared-stores.js'

// the memory store reads an injected clock: the suite's waits advance it, so no test waits in real time
const clock = testClock()
await stateStoreSuite({ test, title: 'MemoryStore', ...storePorts('memory', 'conformance', clock), wait: async (ms) => { clock.advance(ms) } })

await stateStoreSuite({ test, title: 'RedisStore', ...storePorts('redis', 'conformance') })
