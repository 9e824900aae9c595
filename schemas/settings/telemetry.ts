// The settings group of telemetry: what the OpenTelemetry spans may name.
import { Flag, Group } from './parts.js'

/** OpenTelemetry spans and metrics (recorded only while the host registered an SDK; see docs/observability.md). */
export const TELEMETRY_SETTINGS = {
  telemetry: Group({
    /**
     * Spans and their events carry the user's ID (`user.id`) and an
     * impersonation's actor (`jwt_login.actor_id`); off, no span names a
     * user. Metrics never do.
     */
    userIds: Flag(false)
  })
}
