/** PostgresStore, on a table of this process's own schema, through the published StateStore suite. */
import { test } from 'tap'
import { stateStoreSuite } from '../../lib/conformance.js'
import { storePorts } from '../helpers/shared-stores.js'

await stateStoreSuite({ test, title: 'PostgresStore', ...storePorts('postgres', 'conformance') })
