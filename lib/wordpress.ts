/**
 * `fastify-jwt-login/wordpress`: for hosts moving off WordPress and Simple JWT
 * Login. A user adapter over an existing WordPress database (needs the
 * optional peers `mysql2` and `bcrypt`), WordPress's password hashes for
 * hosts that keep their own adapter (needs `bcrypt`), and the import of
 * Simple JWT Login's settings.
 */
export { WordPressUserAdapter, type WordPressUser, type WordPressUserAdapterOptions } from './wordpress/users.js'
export { hashWordPressPassword, verifyWordPressHash, wordPressHashFormat, wordPressSlash, WORDPRESS_BCRYPT_COST, type WordPressHashFormat, type WordPressHashWrite } from './wordpress/hashes.js'
export { hashTypedWordPressPassword, verifyTypedWordPressPassword } from './wordpress/user-passwords.js'
export { fromSimpleJwtLoginSettings, type ImportedSettings, type LeftBehind } from './wordpress/settings-import.js'
