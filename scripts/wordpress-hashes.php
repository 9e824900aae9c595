<?php
/*
 * Writes test/fixtures/wordpress-hashes.json: password hashes made by
 * WordPress's own code and PHP, each with the passwords WordPress accepts or
 * refuses at sign-in for it, and the verdict of WordPress on hashes that
 * jwt-login wrote. test/wordpress/hashes.test.ts checks lib/wordpress/hashes.ts
 * against it, so the tests need neither PHP nor WordPress.
 *
 * Needs PHP 8 CLI (with argon2 support, as Debian's has) and WordPress's
 * source, for wp-includes/class-phpass.php; no database, no web server.
 * On Debian:
 *   apt-get install php-cli
 *   apt-get download wordpress && dpkg-deb -x wordpress_*.deb /tmp/wp
 *   (WordPress's source is then /tmp/wp/usr/share/wordpress)
 *
 * Regenerating takes two steps, from the project's root:
 *
 * 1. Let jwt-login write hashes, in each form it writes: with hashWordPressPassword
 *    (the password as given), and as the WordPress user adapter's setPassword and
 *    createUser write them (hashTypedWordPressPassword: slashed as WordPress's forms slash it):
 *
 *    node --import tsx --input-type=module -e "
 *      import { hashWordPressPassword } from './lib/wordpress/hashes.ts'
 *      import { hashTypedWordPressPassword } from './lib/wordpress/user-passwords.ts'
 *      const passwords = ['jwt-login wrote this', 'pässwörd ✓ 日本', ' \t padded \n', 'x'.repeat(71) + 'ä tail']
 *      const typed = ['it\'s \"q\"\\\\x', 'O\'Brien', 'C:\\\\dir\\\\file', ' \'quoted\' ', 'plain, no quote']
 *      const written = []
 *      for (const write of ['wordpress', 'bcrypt', 'argon2id']) {
 *        for (const password of passwords) written.push({ write, via: 'hashWordPressPassword', password, hash: await hashWordPressPassword(password, write) })
 *        for (const password of typed) written.push({ write, via: 'setPassword', password, hash: await hashTypedWordPressPassword(password, write) })
 *      }
 *      console.log(JSON.stringify(written))" > /tmp/jwt-login-hashes.json
 *
 * 2. Let WordPress's code hash and check, and record all of it:
 *
 *    php scripts/wordpress-hashes.php /path/to/wordpress /tmp/jwt-login-hashes.json > test/fixtures/wordpress-hashes.json
 *
 * How WordPress checks a password at sign-in, as modelled below:
 * - wp_authenticate trims it (PHP's trim: " \t\n\r\0\x0B", no other space) and
 *   an empty one is refused before any hash is read. (WordPress's test is
 *   PHP's empty(), which refuses the password "0" too; jwt-login does not.)
 * - WordPress 6.8 (wp_check_password): over 4096 bytes, refused; a "$wp" hash
 *   is bcrypt over base64(HMAC-SHA384(password, key "wp-sha384")); "$P$" goes
 *   to phpass; a hash of at most 32 characters is MD5 hex; anything else goes
 *   to password_verify (plain bcrypt, argon2).
 * - WordPress before 6.8: at most 32 characters is MD5 hex, anything else
 *   goes to phpass's CheckPassword, which reads "$P$" and "$H$" itself and
 *   hands every other hash to crypt() (plain bcrypt, but not "$wp", argon2).
 *
 * What reaches these checks at wp-login.php is slashed: wp-settings.php runs
 * wp_magic_quotes(), which runs PHP's addslashes over $_POST (a backslash before
 * ', " and \, a NUL as \0), and wp_signon hands $_POST['pwd'] on as it is; the
 * reset form (wp-login.php?action=rp, reset_password, wp_set_password) and the
 * profile form (edit_user, wp_update_user) hash $_POST['pass1'] as slashed too
 * (the profile form refuses a \ in a new password). WP-CLI and code calling
 * wp_set_password with a string of their own hash it unslashed. The "slashed"
 * hashes below are of both kinds, with the verdicts of wp-login.php (the typed
 * password slashed) and of code checking the password as given.
 *
 * bcrypt reads at most 72 bytes of what it is given, and PHP's stops at a
 * NUL. A plain bcrypt hash ("$2y$") therefore accepts any password that shares
 * its first 72 bytes, even when the 72nd byte splits a character; the "$wp"
 * form hands bcrypt a 64-character HMAC of the whole password instead, so
 * every byte counts. Every hash here is random-salted: each run writes other
 * hashes with the same verdicts.
 */

if ($argc !== 3) {
  fwrite(STDERR, "usage: php scripts/wordpress-hashes.php <wordpress source> <hashes written by jwt-login, JSON>\n");
  exit(2);
}
[, $wordpress, $writtenFile] = $argv;
require rtrim($wordpress, '/') . '/wp-includes/class-phpass.php';
require rtrim($wordpress, '/') . '/wp-includes/version.php';

/** Sign-in as WordPress 6.8 checks it: wp_authenticate, then wp_check_password. */
function signs_in_68(string $typed, string $hash): bool
{
  $password = trim($typed);
  if ($password === '' || strlen($password) > 4096) {
    return false;
  }
  if (str_starts_with($hash, '$wp')) {
    return password_verify(wp_prehash($password), substr($hash, 3));
  }
  if (str_starts_with($hash, '$P$')) {
    return (new PasswordHash(8, true))->CheckPassword($password, $hash);
  }
  if (strlen($hash) <= 32) {
    return hash_equals($hash, md5($password));
  }
  return password_verify($password, $hash);
}

/** Sign-in as WordPress before 6.8 checks it: wp_authenticate, then wp_check_password. */
function signs_in_before_68(string $typed, string $hash): bool
{
  $password = trim($typed);
  if ($password === '') {
    return false;
  }
  if (strlen($hash) <= 32) {
    return hash_equals($hash, md5($password));
  }
  return (new PasswordHash(8, true))->CheckPassword($password, $hash);
}

/** What WordPress 6.8 hands bcrypt for a password. */
function wp_prehash(string $password): string
{
  return base64_encode(hash_hmac('sha384', $password, 'wp-sha384', true));
}

/** A phpass salt of 8 characters of its alphabet. */
function phpass_salt(): string
{
  return substr((new PasswordHash(8, true))->gensalt_private(random_bytes(6)), 4, 8);
}

/** Argon2 settings that keep the tests quick; the form is what counts, and PHP's defaults (64 MiB, 4 passes) read the same way. */
$argon2Light = ['memory_cost' => 8192, 'time_cost' => 1, 'threads' => 1];

/** The hash of each form, as the code that writes it does (WordPress trims first). */
$writers = [
  'wordpress' => ['wordpress', 'as wp_hash_password of WordPress 6.8 computes it', fn ($p) => '$wp' . password_hash(wp_prehash(trim($p)), PASSWORD_BCRYPT)],
  'bcrypt' => ['bcrypt', 'password_hash, PASSWORD_BCRYPT ($2y$)', fn ($p) => password_hash(trim($p), PASSWORD_BCRYPT)],
  'phpass' => ['phpass', 'wp_hash_password before 6.8 (phpass, $P$)', fn ($p) => (new PasswordHash(8, true))->HashPassword(trim($p))],
  'md5' => ['md5', 'md5, WordPress before 2.5', fn ($p) => md5(trim($p))],
  'phpass-blowfish' => ['bcrypt', 'phpass without portable hashes ($2a$, older plugins)', fn ($p) => (new PasswordHash(8, false))->HashPassword(trim($p))],
  'phpbb' => ['phpass', 'phpass as phpBB writes it ($H$, 2^11 rounds)', fn ($p) => (new PasswordHash(8, true))->crypt_private(trim($p), '$H$9' . phpass_salt())],
  'phpass-2^7' => ['phpass', 'phpass with the fewest rounds it reads ($P$5, 2^7)', fn ($p) => (new PasswordHash(8, true))->crypt_private(trim($p), '$P$5' . phpass_salt())],
  'argon2id' => ['argon2', 'password_hash, PASSWORD_ARGON2ID, 8 MiB, 1 pass (wp_hash_password_algorithm and _options filters)', fn ($p) => password_hash(trim($p), PASSWORD_ARGON2ID, $argon2Light)],
  'argon2i' => ['argon2', 'password_hash, PASSWORD_ARGON2I, 8 MiB, 1 pass (wp_hash_password_algorithm and _options filters)', fn ($p) => password_hash(trim($p), PASSWORD_ARGON2I, $argon2Light)],
];

$head72 = str_repeat('x', 71);
/** The passwords: each with a wrong one, the forms to write it in, and more passwords to try on top of the usual ones. */
$passwords = [
  'ascii' => ['password' => 'correct horse battery staple', 'wrong' => 'Correct horse battery staple', 'forms' => ['wordpress', 'bcrypt', 'phpass', 'md5', 'phpbb', 'argon2i'], 'more' => []],
  'non-ascii' => ['password' => 'pässwörd ✓ 日本', 'wrong' => 'passwörd ✓ 日本', 'forms' => ['wordpress', 'bcrypt', 'phpass', 'md5', 'phpass-blowfish', 'argon2id'], 'more' => ['PÄSSWÖRD ✓ 日本', "p\u{0061}\u{0308}sswörd ✓ 日本"]],
  'spaced' => ['password' => " \t spaced out\t\n ", 'wrong' => 'spacedout', 'forms' => ['wordpress', 'bcrypt', 'phpass', 'md5', 'argon2id', 'phpass-2^7'], 'more' => ['spaced out', "\x0B\0spaced out\r", "\u{00A0}spaced out", "spaced out\u{3000}"]],
  '72 bytes' => ['password' => str_repeat('Ab3', 24), 'wrong' => 'B' . substr(str_repeat('Ab3', 24), 1), 'forms' => ['wordpress', 'bcrypt', 'phpass', 'md5'], 'more' => [str_repeat('Ab3', 24) . '!', substr(str_repeat('Ab3', 24), 0, 71) . '4']],
  'over 72 bytes' => ['password' => $head72 . 'ä tail', 'wrong' => 'y' . substr($head72, 1) . 'ä tail', 'forms' => ['wordpress', 'bcrypt', 'phpass', 'md5', 'phpass-blowfish'], 'more' => [$head72 . 'ö other', $head72 . str_repeat('ä', 2012) . 'y', $head72 . str_repeat('ä', 2013)]],
  'short' => ['password' => 'x', 'wrong' => 'X', 'forms' => ['wordpress', 'bcrypt', 'phpass', 'md5'], 'more' => ["x\0anything", "x\0"]],
];

$hashes = [];
foreach ($passwords as $name => $entry) {
  foreach ($entry['forms'] as $form) {
    [$format, $writer, $write] = $writers[$form];
    $hash = $write($entry['password']);
    // phpBB's $H$ is phpass's to read: WordPress 6.8 hands it to password_verify, which cannot.
    $rules = str_starts_with($hash, '$H$') ? 'before 6.8' : '6.8';
    $tries = array_merge([$entry['password'], $entry['wrong'], " \t" . $entry['password'] . "\n ", "\u{00A0}" . $entry['password']], $entry['more']);
    $signIns = [];
    foreach (array_unique($tries) as $typed) {
      $signIns[] = [
        'password' => $typed,
        'accepted' => $rules === '6.8' ? signs_in_68($typed, $hash) : signs_in_before_68($typed, $hash),
      ];
    }
    $hashes[] = [
      'name' => "$name, $form",
      'writer' => $writer,
      'format' => $format,
      'rules' => $rules,
      'password' => $entry['password'],
      'wrong' => $entry['wrong'],
      'hash' => $hash,
      'signIns' => $signIns,
    ];
  }
}

/** The passwords with characters WordPress slashes, each with a wrong one and more to try. */
$quoted = [
  'the issue\'s' => ['password' => 'it\'s "q"\\x', 'wrong' => 'its "q"\\x', 'more' => ['it\'s "q"x', "it's \"q\"\\\\x", 'it\\\'s \\"q\\"\\\\x']],
  'apostrophe' => ['password' => "O'Brien", 'wrong' => 'OBrien', 'more' => ["O\\'Brien", " O'Brien\t"]],
  'backslashes' => ['password' => 'C:\\dir\\file', 'wrong' => 'C:dirfile', 'more' => ['C:\\\\dir\\\\file']],
  'double quotes' => ['password' => 'say "hi"', 'wrong' => "say 'hi'", 'more' => ['say \\"hi\\"']],
];
/** Who hashed it: WordPress's forms (the password slashed) or WP-CLI and code (as given), in each form WordPress reads. */
$slashWriters = [
  'wordpress, slashed' => ['wordpress', true, 'wp_set_password(wp_slash(…)) of WordPress 6.8: the reset and profile forms'],
  'phpass, slashed' => ['phpass', true, 'wp_set_password(wp_slash(…)) before 6.8 (phpass, $P$)'],
  'bcrypt, slashed' => ['bcrypt', true, 'password_hash of the slashed password ($2y$, a plugin on the forms)'],
  'md5, slashed' => ['md5', true, 'md5 of the slashed password, WordPress before 2.5'],
  'wordpress, as given' => ['wordpress', false, 'wp_set_password(…) unslashed, WordPress 6.8 (WP-CLI, code)'],
  'phpass, as given' => ['phpass', false, 'wp_set_password(…) unslashed before 6.8 (WP-CLI, code)'],
];
$slashed = [];
foreach ($quoted as $name => $entry) {
  foreach ($slashWriters as $writerName => [$form, $slash, $writer]) {
    $hash = $writers[$form][2]($slash ? addslashes($entry['password']) : $entry['password']);
    $signIns = [];
    foreach (array_unique(array_merge([$entry['password'], $entry['wrong'], addslashes($entry['password'])], $entry['more'])) as $typed) {
      $signIns[] = [
        'password' => $typed,
        'wpLogin' => signs_in_68(addslashes($typed), $hash),
        'asGiven' => signs_in_68($typed, $hash),
      ];
    }
    $slashed[] = [
      'name' => "$name, $writerName",
      'writer' => $writer,
      'format' => $writers[$form][0],
      'slashedWhenHashed' => $slash,
      'password' => $entry['password'],
      'wrong' => $entry['wrong'],
      'hash' => $hash,
      'signIns' => $signIns,
    ];
  }
}

$written = [];
$writtenForForms = [];
foreach (json_decode(file_get_contents($writtenFile), true, 8, JSON_THROW_ON_ERROR) as $entry) {
  if ($entry['via'] === 'setPassword') {
    $signIns = [];
    foreach (array_unique([$entry['password'], trim($entry['password']), addslashes($entry['password']), 'WRONG' . $entry['password']]) as $typed) {
      $signIns[] = [
        'password' => $typed,
        'wpLogin68' => signs_in_68(addslashes($typed), $entry['hash']),
        'wpLoginBefore68' => signs_in_before_68(addslashes($typed), $entry['hash']),
      ];
    }
    $writtenForForms[] = ['write' => $entry['write'], 'password' => $entry['password'], 'hash' => $entry['hash'], 'signIns' => $signIns];
    continue;
  }
  $signIns = [];
  foreach (array_unique([$entry['password'], trim($entry['password']), 'WRONG' . $entry['password']]) as $typed) {
    $signIns[] = [
      'password' => $typed,
      'wordpress68' => signs_in_68($typed, $entry['hash']),
      'wordpressBefore68' => signs_in_before_68($typed, $entry['hash']),
    ];
  }
  $written[] = ['write' => $entry['write'], 'password' => $entry['password'], 'hash' => $entry['hash'], 'signIns' => $signIns];
}

echo json_encode([
  'about' => 'Written by scripts/wordpress-hashes.php (see its header to regenerate); do not edit by hand.',
  'php' => PHP_VERSION,
  'phpass' => "wp-includes/class-phpass.php of WordPress $wp_version",
  'hashes' => $hashes,
  'writtenByJwtLogin' => $written,
  'slashed' => $slashed,
  'writtenForWordPressForms' => $writtenForForms,
], JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR), "\n";
