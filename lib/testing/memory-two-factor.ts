import type { TwoFactorMethod, TwoFactorPort } from '../two-factor/types.js'

/**
 * Two-factor state kept in memory: for the demo, for tests, and as a worked
 * example of the port for hosts (who keep the same data in their database).
 */
export class MemoryTwoFactorStore implements TwoFactorPort {
  readonly #methods = new Map<number, TwoFactorMethod>()
  readonly #secrets = new Map<number, string>()
  readonly #backupCodes = new Map<number, Set<string>>()

  /** Turns two-factor on for a user with `method` as the primary one. */
  enable (userId: number, method: TwoFactorMethod): void {
    this.#methods.set(userId, method)
  }

  disable (userId: number): void {
    this.#methods.delete(userId)
  }

  /** How many unused backup codes the user has. */
  backupCodesLeft (userId: number): number {
    return this.#backupCodes.get(userId)?.size ?? 0
  }

  async methodOf (userId: number): Promise<TwoFactorMethod | null> {
    return this.#methods.get(userId) ?? null
  }

  async getTotpSecret (userId: number): Promise<string | null> {
    return this.#secrets.get(userId) ?? null
  }

  async setTotpSecret (userId: number, secret: string): Promise<void> {
    this.#secrets.set(userId, secret)
  }

  async consumeBackupCode (userId: number, codeHash: string): Promise<boolean> {
    return this.#backupCodes.get(userId)?.delete(codeHash) ?? false
  }

  async replaceBackupCodes (userId: number, codeHashes: string[]): Promise<void> {
    this.#backupCodes.set(userId, new Set(codeHashes))
  }
}
