// The passkey port in memory: a worked example for hosts, and the store of the demo and the tests.
import type { PasskeyPort, PasskeyUse, StoredPasskey } from '../adapters/passkeys.js'

/** A deep copy (its own dates and transports), so that no caller shares an object with the store. */
function copyOf (passkey: StoredPasskey): StoredPasskey {
  return structuredClone(passkey)
}

/** Oldest first; `Array.prototype.sort` is stable, so credentials created at the same time keep their insertion order. */
function byCreation (a: StoredPasskey, b: StoredPasskey): number {
  return a.createdAt.getTime() - b.createdAt.getTime()
}

/**
 * Passkeys kept in memory, by credential id: for the demo, for tests, and
 * as a worked example of the port for hosts (who keep the same data in a
 * table beside their users). Every answer is a copy, and every stored
 * credential one too, as a database would do: a caller changing what it
 * passed or got back changes nothing here.
 */
export class MemoryPasskeyStore implements PasskeyPort {
  readonly #byId = new Map<string, StoredPasskey>()

  async listByUser (userId: number): Promise<StoredPasskey[]> {
    return [...this.#byId.values()].filter(passkey => passkey.userId === userId).sort(byCreation).map(copyOf)
  }

  async findById (credentialId: string): Promise<StoredPasskey | null> {
    const passkey = this.#byId.get(credentialId)
    return passkey === undefined ? null : copyOf(passkey)
  }

  /** The check and the insert run with no await between them, so of concurrent creates of one id exactly one gets in. */
  async create (passkey: StoredPasskey): Promise<boolean> {
    if (this.#byId.has(passkey.id)) return false
    this.#byId.set(passkey.id, copyOf(passkey))
    return true
  }

  /** The greater counter stays: two uses that finish out of order never lower it. */
  async recordUse (credentialId: string, use: PasskeyUse): Promise<void> {
    const passkey = this.#byId.get(credentialId)
    if (passkey === undefined) return
    passkey.counter = Math.max(passkey.counter, use.counter)
    passkey.backedUp = use.backedUp
    passkey.lastUsedAt = new Date(use.lastUsedAt)
  }

  async rename (userId: number, credentialId: string, name: string): Promise<boolean> {
    const passkey = this.#ownedBy(userId, credentialId)
    if (passkey === undefined) return false
    passkey.name = name
    return true
  }

  async delete (userId: number, credentialId: string): Promise<boolean> {
    return this.#ownedBy(userId, credentialId) !== undefined && this.#byId.delete(credentialId)
  }

  /** The stored credential when it is the user's; another user's is as good as missing. */
  #ownedBy (userId: number, credentialId: string): StoredPasskey | undefined {
    const passkey = this.#byId.get(credentialId)
    return passkey?.userId === userId ? passkey : undefined
  }
}
