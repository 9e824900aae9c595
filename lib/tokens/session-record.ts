// The stored record of a refresh family: short field names on disk, decoded once into named fields by one decode/encode pair.

/**
 * A session's refresh state, O(1) however often it rotates: the hash of the
 * current refresh token, the hash of the previous one, the current token
 * sealed under the previous one (so a retry of the previous token within the
 * reuse interval gets the same successor back, and a copy of the store alone
 * reveals no usable token), and when it rotated.
 */
export interface Session {
  userId: number
  /** Hash of the current refresh token. */
  currentHash: string
  /** Hash of the previous refresh token. */
  previousHash?: string
  /** The current token, encrypted with a key derived from the previous one. */
  sealedCurrent?: string
  /** Time of the last rotation (ms). */
  rotatedAt?: number
  /** How long the user's session index keeps this session (ms); a rotation past half a lifetime moves it. */
  indexedUntil?: number
  /** How its user signed in (`amr`), for the access tokens each rotation issues; absent in records from before 0.3. */
  amr?: string[]
  /** Its user's password fingerprint when it started, sealed (see `passwordFingerprint`); absent when the adapter has none. */
  fingerprint?: string
}

/** A session as stored: one per session, so the names are short; stores in use hold this format. */
interface SessionRecord {
  u: number
  h: string
  p?: string
  n?: string
  t?: number
  x?: number
  m?: string[]
  f?: string
}

/** The session a stored record holds. */
export function decodeSession (raw: string): Session {
  const record = JSON.parse(raw) as SessionRecord
  return { userId: record.u, currentHash: record.h, previousHash: record.p, sealedCurrent: record.n, rotatedAt: record.t, indexedUntil: record.x, amr: record.m, fingerprint: record.f }
}

/** The record to store for a session; the fields it lacks are not written. */
export function encodeSession (session: Session): string {
  const record: SessionRecord = { u: session.userId, h: session.currentHash, p: session.previousHash, n: session.sealedCurrent, t: session.rotatedAt, x: session.indexedUntil, m: session.amr, f: session.fingerprint }
  // JSON.stringify leaves out the fields that are undefined, and keeps this order
  return JSON.stringify(record)
}
