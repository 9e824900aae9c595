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
  password_hash text NOT NULL
);

-- One account per email whatever its case: Alice@Example.com cannot sign up
-- next to alice@example.com, and findByEmail uses this index.
CREATE UNIQUE INDEX IF NOT EXISTS users_email_lower ON users (lower(email));

CREATE TABLE IF NOT EXISTS two_factor (
  user_id integer PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  -- NULL: two-factor is off and the password alone signs in
  method text CHECK (method IN ('totp', 'email', 'backup_codes')),
  -- the confirmed base32 TOTP secret (encrypt the column if your threat model needs it)
  totp_secret text
);

-- Only SHA-256 hashes of backup codes (hashBackupCode): a database leak gives no usable code.
-- A spent code stays, with the sign-in attempt that spent it (used_by), until the codes are replaced.
CREATE TABLE IF NOT EXISTS backup_codes (
  user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  code_hash text NOT NULL,
  used_by text,
  PRIMARY KEY (user_id, code_hash)
);
ALTER TABLE backup_codes ADD COLUMN IF NOT EXISTS used_by text;
