<?php
/*
 * Writes test/fixtures/wordpress-names.json: what WordPress's own functions,
 * with WordPress's default filters, make of login names and display names
 * given to wp_insert_user. test/users/register-names.test.ts checks
 * lib/core/clean-text.ts and lib/wordpress/names.ts against it, so the tests need
 * neither PHP nor WordPress.
 *
 * Needs PHP 8 CLI and WordPress's source; no database, no web server.
 * On Debian:
 *   apt-get install php-cli php-mbstring
 *   apt-get download wordpress && dpkg-deb -x wordpress_*.deb /tmp/wp
 *   (WordPress's source is then /tmp/wp/usr/share/wordpress)
 *
 * From the project's root:
 *   php scripts/wordpress-names.php /path/to/wordpress > test/fixtures/wordpress-names.json
 *
 * wp_insert_user needs a database, so it is not called: each field is made
 * as it makes it, by the same functions and filters. Its input is slashed
 * (as wp_create_user and the REST API pass it) and its output unslashed:
 * - user_login: sanitize_user($login, true), the 'pre_user_login' filters,
 *   trim; WordPress's validate_username refuses a login that this changes
 *   or leaves empty.
 * - user_nicename: sanitize_title(mb_substr(user_login, 0, 50)), the
 *   'pre_user_nicename' filters.
 * - nickname (user meta): the 'pre_user_nickname' filters on the login.
 * - display_name: the login when none is given, through the
 *   'pre_user_display_name' filters (sanitize_text_field, wp_filter_kses,
 *   _wp_specialchars).
 * The few functions WordPress's loader would define and these need are
 * stubbed below, with the values of a site in UTF-8 and en_US.
 */
if ($argc !== 2) {
    fwrite(STDERR, "usage: php scripts/wordpress-names.php /path/to/wordpress\n");
    exit(2);
}
define('ABSPATH', rtrim($argv[1], '/') . '/');
define('WPINC', 'wp-includes');
function get_locale() { return 'en_US'; }
function wp_allowed_protocols() { return array('http', 'https'); }
function mbstring_binary_safe_encoding($reset = false) {}
function reset_mbstring_encoding() {}
function get_option($option, $default = false) { return $option === 'blog_charset' ? 'UTF-8' : $default; }
function wp_load_alloptions() { return array('blog_charset' => 'UTF-8'); }
foreach (array('compat', 'plugin', 'formatting', 'kses', 'load', 'class-wp-block-parser', 'blocks', 'default-filters', 'version') as $file) {
    require ABSPATH . WPINC . "/$file.php";
}

$logins = array(
    'alice', 'Alice Example', 'New User.1', 'john.doe', 'john@doe', 'jane.doe@example.com', 'under_score-dash',
    'Alice.B@example.com', '-dash-', 'a..b', 'x@', 'a - b', str_repeat('L', 60), str_repeat('l', 59) . '.',
    ' alice', 'alice ', 'al  ice', "al\tice", "al\nice", '<b>alice</b>', 'al<i>ce', 'alice%41', 'al&amp;ice', 'al&ice',
    'josé', 'bob+tag@example.com', "o'brien", 'a/b', 'alice!', '😀', '', ' ', '%41', '<script>x</script>'
);
$names = array(
    'Bob', '<script>alert(1)</script>Bob', 'Bob <b>Builder</b>', "Bob\nBuilder", "  Bob \t Builder  ", 'Tom & Jerry',
    'Tom &amp; Jerry', '&copy; Bob', 'a < b', 'a<b', 'a > b', '1 < 2 > 0', '<style>p{}</style>Sue', '<!-- note -->Ann',
    'Bob%41 Builder', '100%', 'Bob "The" Builder', "Bob's", 'back\\slash', 'Zoë 日本', '<img src=x onerror=alert(1)>',
    '<<b>>', 'Bob</', '', '   ', '%41%42', 'a < "b" &amp; \'c\'', 'x < 1 & y', '%%4141'
);

$slashed = function ($filter, $value) { return wp_unslash(apply_filters($filter, wp_slash($value))); };
$out = array(
    'about' => 'Written by scripts/wordpress-names.php (see its header to regenerate); do not edit by hand.',
    'wordpress' => $wp_version,
    'php' => PHP_VERSION,
    'logins' => array(),
    'displayNames' => array(),
);
foreach ($logins as $login) {
    $stored = trim(wp_unslash(apply_filters('pre_user_login', sanitize_user(wp_slash($login), true))));
    $accepted = $stored === $login && $stored !== '';
    $out['logins'][] = array(
        'given' => $login,
        'sanitized' => $stored,
        'accepted' => $accepted,
        'user_nicename' => $accepted ? apply_filters('pre_user_nicename', sanitize_title(mb_substr($stored, 0, 50))) : null,
        'nickname' => $accepted ? $slashed('pre_user_nickname', $stored) : null,
    );
}
foreach ($names as $name) {
    $out['displayNames'][] = array(
        'given' => $name,
        'sanitize_text_field' => sanitize_text_field($name),
        'display_name' => $slashed('pre_user_display_name', $name === '' ? 'alice' : $name),
    );
}
echo json_encode($out, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE), "\n";
