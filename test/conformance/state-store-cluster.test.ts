/** RedisStore on a local Redis Cluster (three masters) through the published StateStore suite. */
import { test } from 'tap'
import { stateStoreSuite } from '../../lib/conformance.js'
import { storePorts } from '../helpers/shared-stores.js'

await stateStoreSuite({ test, title: 'RedisStore on a Redis Cluster', ...storePorts('cluster', 'conformance') })
