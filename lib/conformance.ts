// fastify-jwt-login/conformance: the suites jwt-login's own ports pass, for every adapter author, on any test runner; the fault wrapper and sweep; the ports' capability manifests.
export { ConformanceError, type Rule, type SuiteOptions, type TestBody, type TestFunction } from './conformance/runner.js'
export { Faults, InjectedFault, StalledRunError, faultyPort, measure, sweepFaults, type FaultCall, type FaultMode, type FaultPlan, type SweepOptions, type SweepOutcome } from './conformance/faults.js'
export {
  MAILER_MANIFEST, PASSKEY_PORT_MANIFEST, STATE_STORE_MANIFEST, TWO_FACTOR_PORT_MANIFEST, USER_ADAPTER_MANIFEST,
  supportsOf, type Capability, type PortManifest
} from './adapters/manifest.js'
export * from './conformance/users.js'
export * from './conformance/store.js'
export * from './conformance/two-factor.js'
export * from './conformance/passkeys.js'
export * from './conformance/mailer.js'
