import { normalizeIP } from '@fastify/rate-limit'

/** The IPv6 prefix length one client is counted by: a subscriber is usually given a whole /64. */
export const IPV6_CLIENT_PREFIX = 64

/**
 * The key a client is counted under, for the request limit and for every
 * per-IP lockout: an IPv4 address as it is, an IPv4-mapped IPv6 address
 * (`::ffff:1.2.3.4`) as its IPv4, any other IPv6 address as its /64 network
 * in canonical form (`2001:db8::`). This is @fastify/rate-limit's own
 * `normalizeIP`, so the request limit and the lockouts count alike.
 */
export function clientKey (ip: string): string {
  return normalizeIP(ip, IPV6_CLIENT_PREFIX)
}
