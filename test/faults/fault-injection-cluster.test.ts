/**
 * The fault sweep of test/faults/fault-injection.test.ts (every route, the k-th
 * store or adapter call failing for every k, then the invariants) on a
 * Redis Cluster of three masters started for this file.
 */
import { faultSuite } from '../helpers/fault-suite.js'

faultSuite(['cluster'])
