/**
 * The fault sweep of test/faults/fault-injection.test.ts (every route, the k-th
 * store or adapter call failing for every k, then the invariants) on
 * PostgresStore, in a schema of this file's own on the local PostgreSQL.
 */
import { faultSuite } from '../helpers/fault-suite.js'

faultSuite(['postgres'])
