// test/fixtures/wordpress-hashes.json, typed: what scripts/wordpress-hashes.php recorded of WordPress's own hashing and sign-in.
import { readFileSync } from 'node:fs'
import type { WordPressHashFormat, WordPressHashWrite } from '../../lib/wordpress/hashes.js'

/** A hash made by PHP and WordPress's code, with what WordPress answered for each password tried on it. */
export interface FixtureHash {
  name: string
  writer: string
  format: WordPressHashFormat
  /** Which WordPress's sign-in jwt-login follows for this hash. */
  rules: '6.8' | 'before 6.8'
  password: string
  wrong: string
  hash: string
  signIns: Array<{ password: string, accepted: boolean }>
}

/** A hash jwt-login wrote, with what WordPress 6.8 and earlier answered for each password tried on it. */
export interface FixtureWritten {
  write: WordPressHashWrite
  password: string
  hash: string
  signIns: Array<{ password: string, wordpress68: boolean, wordpressBefore68: boolean }>
}

/** A hash WordPress's code made of a password with characters it slashes, and the verdicts of wp-login.php and of a check of the password as given. */
export interface SlashedFixture {
  name: string
  writer: string
  format: WordPressHashFormat
  /** Hashed as WordPress's forms hash it (wp_slash first), or as WP-CLI and code do (as given). */
  slashedWhenHashed: boolean
  password: string
  wrong: string
  hash: string
  signIns: Array<{ password: string, wpLogin: boolean, asGiven: boolean }>
}

/** A hash jwt-login wrote as the adapter's setPassword and createUser write it, with wp-login.php's verdicts (6.8, and before). */
export interface WrittenForFormsFixture {
  write: WordPressHashWrite
  password: string
  hash: string
  signIns: Array<{ password: string, wpLogin68: boolean, wpLoginBefore68: boolean }>
}

/** Every section of the fixture. */
export const wordPressHashes = JSON.parse(readFileSync(new URL('../fixtures/wordpress-hashes.json', import.meta.url), 'utf8')) as {
  hashes: FixtureHash[]
  writtenByJwtLogin: FixtureWritten[]
  slashed: SlashedFixture[]
  writtenForWordPressForms: WrittenForFormsFixture[]
}
