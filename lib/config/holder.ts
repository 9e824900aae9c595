/** The settings in force, and their reload from the host's async source on a timer. */
import type { SettingsInput } from '../../schemas/settings.js'
import { resolveSettings, type Settings } from './settings.js'

/** The host's async source of settings (its admin screen): read at start and on every reload. */
export type SettingsSource = () => Promise<SettingsInput>

/** How a `SettingsHolder` reloads, and whom it tells of a refused reload. */
export interface SettingsHolderOptions {
  /** How long a read of the source stays fresh, in ms: the period of the reload timer. */
  ttlMs: number
  /** Hears of a timed reload that was refused (an explicit `reload()` rejects instead). */
  onInvalid: (error: unknown) => void
  /** Checks that a reload does not change what needs a restart; throws to refuse it. */
  accept?: (next: Settings, current: Settings) => void
}

/**
 * Holds the settings in force. Reading them is a field read: a request takes
 * one snapshot when it starts and keeps it. With an async source a timer
 * re-reads it every `ttlMs` (requests never wait for the source); an invalid
 * reload keeps the last good settings. The flows read the real settings here;
 * the host's `jwtLogin.settings` is the redacted view (`redactSettings`).
 */
export class SettingsHolder {
  #current: Settings
  /** The source's answer the settings in force came from, in JSON: an unchanged answer changes nothing. */
  #answer: string
  #timer: NodeJS.Timeout | null = null
  #stopped = false
  readonly #source: SettingsSource | null
  readonly #options: SettingsHolderOptions

  private constructor (initial: Settings, answer: unknown, source: SettingsSource | null, options: SettingsHolderOptions) {
    this.#current = initial
    this.#answer = JSON.stringify(answer)
    this.#source = source
    this.#options = options
  }

  /** Resolves the first settings (an async source is read once); refuses them like `resolveSettings`. */
  static async create (input: SettingsInput | SettingsSource, options: SettingsHolderOptions): Promise<SettingsHolder> {
    if (typeof input === 'function') {
      const answer = await input()
      return new SettingsHolder(resolveSettings(answer), answer, input, options)
    }
    return new SettingsHolder(resolveSettings(input), input, null, options)
  }

  /** The settings in force. */
  get current (): Settings {
    return this.#current
  }

  /**
   * Starts re-reading an async source every `ttlMs` (the timer does not keep
   * the process alive). A timed reload that is refused is reported to
   * `onInvalid`; the last good settings stay.
   */
  start (): void {
    if (this.#source === null || this.#timer !== null) return
    const tick = (): void => {
      // a reload still running at stop() must not arm the timer again
      if (this.#stopped) return
      this.#timer = setTimeout(() => { this.reload().catch(this.#options.onInvalid).finally(tick) }, this.#options.ttlMs).unref()
    }
    tick()
  }

  /** Stops the reload timer for good: a reload still running does not arm it again. */
  stop (): void {
    this.#stopped = true
    if (this.#timer !== null) clearTimeout(this.#timer)
    this.#timer = null
  }

  /**
   * Reads the source now. Resolves once the new settings are in force; rejects
   * when the source fails or its settings are refused (a `JwtLoginSettingsError`
   * naming the field), and the last good settings stay. An answer equal to
   * the one in force keeps the same settings object, so what is cached per
   * settings (verifiers, code keys, the redacted view) is kept too.
   */
  async reload (): Promise<void> {
    if (this.#source === null) return
    const answer = await this.#source()
    const text = JSON.stringify(answer)
    if (text === this.#answer) return
    const next = resolveSettings(answer)
    this.#options.accept?.(next, this.#current)
    this.#current = next
    this.#answer = text
  }
}
