-- The tables of the PostgreSQL example. Names are unqualified: migrate()
-- runs this file with search_path set to the host's schema, and psql can
-- run it the same way (SET search_path TO myschema; \i schema.sql).

CREATE TABLE IF NOT EXISTS users (
  -- integer, not bigint: pg returns bigint as a string, and PublicUser.ID is a number
  id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- logins compare exactly, as the plugin's findByLogin expects
  login text NOT NULL UNIQUE,
  -- kept as the user typed it; uniqueness and lookups go through lower(email)
  email text NOT NULL,
  display_name text NOT NULL,
  roles text[] NOT NULL DEFAULT '{subscriber}',
  -- argon2id, PHC string ($argon2id$v=19$m=19456,t=2,p=1$...)
  password_hash text NOT NULL,
  -- whether the user proved they receive mail at email (PublicUser.email_verified); see below
  email_verified boolean NOT NULL DEFAULT true,
  -- false for a user created without a password (a provider sign-in) until one is set; see below
  has_password boolean NOT NULL DEFAULT true
);

-- A table made before email verification gets the column too. The default is
-- true: a user made before, or by the host's own sign-up, is one the host
-- vouches for, as before; createUser writes false when the plugin says
-- emailVerified: false (POST /users), until the user proves the address.
ALTER TABLE users ADD COLUMN IF NOT EXISTS email_verified boolean NOT NULL DEFAULT true;

-- hasPassword reads has_password before a provider is unlinked, so that a user is never left
-- without a way in. A user made before the column counts as having a password: one made by a
-- provider sign-in has only the hash of a random one, and gets in again by a password reset.
ALTER TABLE users ADD COLUMN IF NOT EXISTS has_password boolean NOT NULL DEFAULT true;

-- One account per email whatever its case: Alice@Example.com cannot sign up
-- next to alice@example.com, and findByEmail uses this index.
CREATE UNIQUE INDEX IF NOT EXISTS users_email_lower ON users (lower(email));

CREATE TABLE IF NOT EXISTS two_factor (
  user_id integer PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  -- NULL: two-factor is off and the password alone signs in
  method text CHECK (method IN ('totp', 'email', 'backup_codes', 'passkey')),
  -- the confirmed base32 TOTP secret (encrypt the column if your threat model needs it)
  totp_secret text
);

-- 0.3 added 'passkey' as a primary method: a table made before gets the wider check too.
ALTER TABLE two_factor DROP CONSTRAINT IF EXISTS two_factor_method_check;
ALTER TABLE two_factor ADD CONSTRAINT two_factor_method_check CHECK (method IN ('totp', 'email', 'backup_codes', 'passkey'));

-- Only SHA-256 hashes of backup codes (hashBackupCode): a database leak gives no usable code.
-- A spent code stays, with the sign-in attempt that spent it (used_by), until the codes are replaced.
CREATE TABLE IF NOT EXISTS backup_codes (
  user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  code_hash text NOT NULL,
  used_by text,
  PRIMARY KEY (user_id, code_hash)
);
ALTER TABLE backup_codes ADD COLUMN IF NOT EXISTS used_by text;

-- WebAuthn credentials (passkeys). Nothing here is secret: the private key never leaves the authenticator.
CREATE TABLE IF NOT EXISTS passkeys (
  -- the credential id, base64url; unique across all users, so create's ON CONFLICT (id) refuses a duplicate
  id text PRIMARY KEY,
  -- a user's credentials go with the user
  user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- the COSE public key, base64url
  public_key text NOT NULL,
  -- the signature counter is an unsigned 32-bit number, past integer's 2^31 - 1; pg returns bigint as a string
  counter bigint NOT NULL DEFAULT 0,
  -- as the browser reported them at registration (internal, hybrid, usb, nfc, ble...)
  transports text[] NOT NULL DEFAULT '{}',
  device_type text NOT NULL CHECK (device_type IN ('singleDevice', 'multiDevice')),
  -- fixed at registration; backed_up is refreshed on every use
  backup_eligible boolean NOT NULL,
  backed_up boolean NOT NULL,
  -- the authenticator model; all zeros when it does not say
  aaguid text NOT NULL,
  -- the user's name for it; the plugin checks its length
  name text NOT NULL,
  created_at timestamptz NOT NULL,
  -- NULL until it first signs
  last_used_at timestamptz
);

-- listByUser reads a user's credentials through it (the primary key serves findById).
CREATE INDEX IF NOT EXISTS passkeys_user_id ON passkeys (user_id);

-- Provider accounts linked to users: a provider sign-in finds its user here first.
CREATE TABLE IF NOT EXISTS jwt_login_identities (
  -- the key of oauth.providers (such as gh), and the provider's stable id of the account; both compared exactly
  provider text NOT NULL,
  subject text NOT NULL,
  -- a user's links go with the user
  user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- what GET /account/identities shows of the account (a login, an email), or NULL
  display text,
  linked_at timestamptz NOT NULL,
  -- a provider account belongs to at most one user...
  PRIMARY KEY (provider, subject),
  -- ...and a user has at most one account of each provider; listIdentities and the cascade read through it
  UNIQUE (user_id, provider)
);
