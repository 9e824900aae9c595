/** German (Deutsch), formal "Sie": the messages and mails for every `de-*` client. */
import type { Catalogue } from '../catalogue.js'

export const de: Catalogue = {
  errors: {
    ERR_JWT_LOGIN_TOKEN_MALFORMED: 'Das JWT besteht nicht aus drei durch Punkte getrennten Segmenten.',
    ERR_JWT_LOGIN_TOKEN_ALGORITHM: 'Der Algorithmus des JWT entspricht nicht dem konfigurierten.',
    ERR_JWT_LOGIN_TOKEN_KID_UNKNOWN: 'Die Schlüssel-ID des JWT ist unbekannt.',
    ERR_JWT_LOGIN_TOKEN_SIGNATURE: 'Die Signatur des JWT ist ungültig.',
    ERR_JWT_LOGIN_TOKEN_CLAIM_INVALID: 'Die Claims des JWT sind für diesen Dienst nicht gültig.',
    ERR_JWT_LOGIN_TOKEN_NOT_YET_VALID: 'Das JWT ist noch nicht gültig.',
    ERR_JWT_LOGIN_TOKEN_EXPIRED: 'Das JWT ist abgelaufen.',
    ERR_JWT_LOGIN_TOKEN_DECODE: 'Die Segmente des JWT sind kein gültiges base64url-kodiertes JSON.',
    ERR_JWT_LOGIN_AUTHORIZATION_MALFORMED: 'Der Authorization-Header enthält kein Bearer-Token.',
    ERR_JWT_LOGIN_INTERIM_TOKEN_MISSING: 'Das Zwischen-JWT fehlt.',
    ERR_JWT_LOGIN_TOKEN_USER_GONE: 'Der Benutzer zu diesem JWT existiert nicht mehr.',
    ERR_JWT_LOGIN_REFRESH_USER_GONE: 'Der Benutzer zu diesem Aktualisierungstoken existiert nicht mehr.',
    ERR_JWT_LOGIN_AUTH_CODE_INVALID: 'Der auth code ist ungültig oder abgelaufen.',
    ERR_JWT_LOGIN_AUTH_CODE_MISSING: 'Der auth code ist erforderlich.',
    ERR_JWT_LOGIN_AUTH_DISABLED: 'Die Authentifizierung ist nicht aktiviert.',
    ERR_JWT_LOGIN_LOGIN_MISSING: 'Geben Sie genau eines der Felder email, username oder login an.',
    ERR_JWT_LOGIN_PASSWORD_MISSING: 'Geben Sie genau eines der Felder password oder password_hash an.',
    ERR_JWT_LOGIN_WRONG_CREDENTIALS: 'Die Anmeldedaten sind falsch.',
    ERR_JWT_LOGIN_PASSWORD_HASH_DISABLED: 'Die Anmeldung mit password_hash ist nicht aktiviert.',
    ERR_JWT_LOGIN_REFRESH_TOKEN_MISSING: 'Das Feld refresh_token fehlt.',
    ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID: 'Das Aktualisierungstoken ist ungültig, abgelaufen oder wurde bereits verwendet.',
    ERR_JWT_LOGIN_USER_CREATE_FAILED: 'Der Benutzer konnte nicht angelegt werden.',
    ERR_JWT_LOGIN_JWT_MISSING: 'Das JWT fehlt.',
    ERR_JWT_LOGIN_BEARER_MISSING: 'Das JWT fehlt.',
    ERR_JWT_LOGIN_TOKEN_REVOKED: 'Das JWT wurde widerrufen.',
    ERR_JWT_LOGIN_REFRESH_DISABLED: 'Aktualisierungstoken sind nicht aktiviert.',
    ERR_JWT_LOGIN_VALIDATE_DISABLED: 'Der Endpunkt validate ist nicht aktiviert.',
    ERR_JWT_LOGIN_REVOKE_DISABLED: 'Der Endpunkt revoke ist nicht aktiviert.',
    ERR_JWT_LOGIN_TWO_FACTOR_UNAVAILABLE: 'Die Zwei-Faktor-Authentifizierung ist nicht verfügbar.',
    ERR_JWT_LOGIN_INTERIM_TOKEN_INVALID: 'Das Zwischen-JWT ist ungültig, abgelaufen oder kein Zwischentoken.',
    ERR_JWT_LOGIN_CHALLENGE_CLOSED: 'Die Zwei-Faktor-Abfrage ist unbekannt, abgelaufen, bereits verwendet oder geschlossen.',
    ERR_JWT_LOGIN_TWO_FACTOR_LOCKED: 'Zu viele fehlgeschlagene Zwei-Faktor-Versuche.',
    ERR_JWT_LOGIN_TWO_FACTOR_CODE_MISSING: 'Der Zwei-Faktor-Code fehlt.',
    ERR_JWT_LOGIN_TWO_FACTOR_CODE_WRONG: 'Der Zwei-Faktor-Code ist falsch.',
    ERR_JWT_LOGIN_INTERIM_TOKEN_USED: 'Ein Zwischentoken ist hier nicht zulässig; schließen Sie zuerst den Zwei-Faktor-Schritt ab.',
    ERR_JWT_LOGIN_TWO_FACTOR_DISABLED: 'Die Zwei-Faktor-Anmeldung ist abgeschaltet, wird für dieses Konto aber benötigt.',
    ERR_JWT_LOGIN_RESET_DISABLED: 'Das Zurücksetzen von Passwörtern ist nicht aktiviert.',
    ERR_JWT_LOGIN_RESET_EMAIL_MISSING: 'Das Feld email fehlt.',
    ERR_JWT_LOGIN_RESET_CODE_MISSING: 'Das Feld code fehlt.',
    ERR_JWT_LOGIN_RESET_PASSWORD_MISSING: 'Das Feld new_password fehlt.',
    ERR_JWT_LOGIN_RESET_CODE_INVALID: 'Der Code zum Zurücksetzen ist ungültig oder abgelaufen.',
    ERR_JWT_LOGIN_RESET_EMAIL_MALFORMED: 'Das Feld email enthält keine gültige E-Mail-Adresse.',
    ERR_JWT_LOGIN_RESET_REQUEST_EMAIL_INVALID: 'Das Feld email fehlt oder enthält keine gültige E-Mail-Adresse.',
    ERR_JWT_LOGIN_PASSWORD_POLICY: 'Das neue Passwort entspricht nicht der Passwortrichtlinie.',
    ERR_JWT_LOGIN_RESET_INCOMPLETE: 'Das Passwort wurde nicht geändert, angemeldete Sitzungen wurden aber möglicherweise beendet; versuchen Sie es noch einmal mit dem Code.',
    ERR_JWT_LOGIN_REGISTER_DISABLED: 'Die Registrierung ist nicht erlaubt.',
    ERR_JWT_LOGIN_REGISTER_FIELDS_MISSING: 'Geben Sie eine E-Mail-Adresse und ein Passwort an.',
    ERR_JWT_LOGIN_REGISTER_EMAIL_INVALID: 'Das Feld email enthält keine gültige E-Mail-Adresse, oder email bzw. user_login ist länger als 60 Zeichen.',
    ERR_JWT_LOGIN_REGISTER_DOMAIN: 'Benutzer dieser E-Mail-Domain dürfen sich nicht registrieren.',
    ERR_JWT_LOGIN_REGISTER_EMAIL_NOT_ASCII: 'Die E-Mail-Adresse muss in ASCII geschrieben sein, eine internationalisierte Domain in ihrer xn---Form; Buchstaben, die ASCII-Buchstaben nur ähneln, werden abgelehnt.',
    ERR_JWT_LOGIN_USER_EXISTS: 'Der Benutzer existiert bereits.',
    ERR_JWT_LOGIN_DELETE_DISABLED: 'Das Löschen von Benutzern ist nicht aktiviert.',
    ERR_JWT_LOGIN_DELETE_INCOMPLETE: 'Der Benutzer wurde nicht gelöscht, seine Sitzungen wurden aber beendet; melden Sie sich an und versuchen Sie es erneut.',
    ERR_JWT_LOGIN_REGISTER_SIGN_IN_FAILED: 'Der Benutzer wurde angelegt, konnte aber nicht angemeldet werden; melden Sie sich mit seinem Passwort an.',
    ERR_JWT_LOGIN_PROVIDER_UNKNOWN: 'Der Anbieter ist unbekannt.',
    ERR_JWT_LOGIN_PROVIDER_DISABLED: 'Der Anbieter ist nicht aktiviert.',
    ERR_JWT_LOGIN_PROVIDER_CODE_MISSING: 'Geben Sie code oder id_token an.',
    ERR_JWT_LOGIN_PROVIDER_CODE_INVALID: 'Der Anbieter hat den Code abgelehnt.',
    ERR_JWT_LOGIN_ID_TOKEN_INVALID: 'Das ID-Token ist ungültig.',
    ERR_JWT_LOGIN_PROVIDER_USER_NOT_FOUND: 'Es gibt keinen passenden Benutzer, und die Registrierung ist deaktiviert.',
    ERR_JWT_LOGIN_EMAIL_UNVERIFIED: 'Der Anbieter hat die E-Mail-Adresse nicht bestätigt.',
    ERR_JWT_LOGIN_RATE_LIMITED: 'Zu viele Anfragen; versuchen Sie es später erneut.',
    ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE: 'Ein benötigter Dienst ist nicht verfügbar; es wurde nichts geändert.',
    ERR_JWT_LOGIN_PROVIDER_TIMEOUT: 'Der Identitätsanbieter hat nicht rechtzeitig geantwortet.',
    ERR_JWT_LOGIN_PROVIDER_ERROR: 'Der Identitätsanbieter hat mit einem Fehler geantwortet.',
    ERR_JWT_LOGIN_BAD_REQUEST: 'Die Anfrage ist fehlerhaft.',
    ERR_JWT_LOGIN_NOT_FOUND: 'Diese Route gibt es nicht.',
    ERR_JWT_LOGIN_ORIGIN_NOT_ALLOWED: 'Der Ursprung (Origin) dieser Anfrage ist nicht zulässig.',
    ERR_JWT_LOGIN_CSRF_TOKEN_INVALID: 'Das CSRF-Token fehlt oder ist falsch.',
    ERR_JWT_LOGIN_ID_TOKEN_REPLAYED: 'Das ID-Token wurde bereits verwendet.',
    ERR_JWT_LOGIN_PROVIDER_EMAIL_MISMATCH: 'Das gefundene Konto hat nicht die E-Mail-Adresse, die der Anbieter bestätigt.',
    ERR_JWT_LOGIN_SESSIONS_DISABLED: 'Die Sitzungsverwaltung ist nicht aktiviert.',
    ERR_JWT_LOGIN_SESSION_NOT_FOUND: 'Diese Sitzung gibt es nicht.',
    ERR_JWT_LOGIN_DEVICE_NOT_FOUND: 'Dieses vertrauenswürdige Gerät gibt es nicht.',
    ERR_JWT_LOGIN_PASSKEYS_DISABLED: 'Passkeys sind nicht aktiviert.',
    ERR_JWT_LOGIN_PASSKEY_REFUSED: 'Der Passkey konnte nicht überprüft werden; fordern Sie neue Optionen an und versuchen Sie es erneut.',
    ERR_JWT_LOGIN_PASSKEY_ORIGIN: 'Der Passkey-Vorgang wurde auf einem Ursprung ausgeführt, der nicht in passkeys.origins aufgeführt ist.',
    ERR_JWT_LOGIN_PASSKEY_RP_ID: 'Der Passkey ist an eine andere RP-ID als passkeys.rpId gebunden.',
    ERR_JWT_LOGIN_PASSKEY_NOT_FOUND: 'Diesen Passkey gibt es nicht.',
    ERR_JWT_LOGIN_REAUTHENTICATION_REQUIRED: 'Eine aktuellere Anmeldung ist erforderlich: Bestätigen Sie Ihre Identität erneut mit einem Passwort, einem Code oder einem Passkey.',
    ERR_JWT_LOGIN_PASSKEY_REGISTRATION_REFUSED: 'Der neue Passkey konnte nicht überprüft werden; fordern Sie neue Optionen an und versuchen Sie es erneut.',
    ERR_JWT_LOGIN_PASSKEY_EXISTS: 'Dieser Passkey ist bereits registriert.',
    ERR_JWT_LOGIN_PASSKEY_LIMIT: 'Das Konto hat bereits die höchstzulässige Anzahl an Passkeys; löschen Sie zuerst einen.',
    ERR_JWT_LOGIN_PASSKEY_AUTHENTICATOR_NOT_ALLOWED: 'Diese Art von Authentifikator ist hier nicht zugelassen (passkeys.aaguids).',
    ERR_JWT_LOGIN_STEP_UP_FACTOR_MISSING: 'Die erneute Bestätigung erfordert ein Passwort, einen Code, einen Passkey oder ein Passwort zusammen mit einem Code.',
    ERR_JWT_LOGIN_BUSY: 'Zu viele Anfragen warten darauf, dass ein Passwort geprüft oder gehasht wird; versuchen Sie es später erneut.',
    ERR_JWT_LOGIN_EMAIL_NOT_VERIFIED: 'Die E-Mail-Adresse dieses Kontos ist noch nicht bestätigt: Geben Sie den Code ein, der an sie gesendet wurde, oder fordern Sie einen neuen an.',
    ERR_JWT_LOGIN_PROVIDER_ACCOUNT_UNVERIFIED: 'Es gibt bereits ein Konto mit dieser E-Mail-Adresse, seine Adresse wurde aber nie bestätigt: Setzen Sie das Passwort des Kontos per E-Mail zurück, was die Adresse bestätigt, und melden Sie sich dann an.',
    ERR_JWT_LOGIN_ACCOUNT_DISABLED: 'Diese Kontofunktion ist nicht aktiviert.',
    ERR_JWT_LOGIN_ACCOUNT_CODE_INVALID: 'Der Code ist ungültig oder abgelaufen.',
    ERR_JWT_LOGIN_EMAIL_TAKEN: 'Diese E-Mail-Adresse kann für dieses Konto nicht verwendet werden.',
    ERR_JWT_LOGIN_EMAIL_INVALID: 'Die neue E-Mail-Adresse ist ungültig, länger als 100 Zeichen, nicht in ASCII geschrieben oder bereits die des Kontos.',
    ERR_JWT_LOGIN_EMAIL_VERIFIED_ALREADY: 'Die E-Mail-Adresse dieses Kontos ist bereits bestätigt.',
    ERR_JWT_LOGIN_CURRENT_PASSWORD_WRONG: 'Das aktuelle Passwort ist falsch.',
    ERR_JWT_LOGIN_TOTP_CODE_WRONG: 'Der Code passt nicht zum neuen Geheimschlüssel: Prüfen Sie die Uhrzeit der App und versuchen Sie es mit ihrem nächsten Code.',
    ERR_JWT_LOGIN_TOTP_NOT_PENDING: 'Kein neuer TOTP-Geheimschlüssel wartet auf seinen ersten Code: Beginnen Sie die Einrichtung erneut.',
    ERR_JWT_LOGIN_TWO_FACTOR_METHOD_UNAVAILABLE: 'Dieses Konto kann diese Methode noch nicht verwenden: Richten Sie sie zuerst ein.',
    ERR_JWT_LOGIN_ACCOUNT_INCOMPLETE: 'Die Änderung wurde nicht vorgenommen, Sitzungen wurden aber möglicherweise beendet; versuchen Sie es erneut.',
    ERR_JWT_LOGIN_REGISTER_LOGIN_INVALID: 'Das Feld user_login darf nur die Buchstaben a-z und A-Z, die Ziffern 0-9, Leerzeichen und _ . - @ enthalten, ohne Leerzeichen am Anfang oder Ende oder zwei hintereinander, und keine andere E-Mail-Adresse als die des Kontos.',
    ERR_JWT_LOGIN_EMAIL_SIGN_IN_DISABLED: 'Die Anmeldung per E-Mail ist nicht aktiviert.',
    ERR_JWT_LOGIN_EMAIL_SIGN_IN_EMAIL_INVALID: 'Das Feld email fehlt oder enthält keine gültige E-Mail-Adresse.',
    ERR_JWT_LOGIN_EMAIL_SIGN_IN_CODE_MISSING: 'Geben Sie den Code aus der E-Mail an.',
    ERR_JWT_LOGIN_EMAIL_SIGN_IN_CODE_INVALID: 'Der Code ist falsch, bereits verwendet oder abgelaufen; fordern Sie einen neuen an, falls er weiterhin abgelehnt wird.',
    ERR_JWT_LOGIN_IDENTITY_TAKEN: 'Dieses Konto des Anbieters ist mit einem anderen Konto verknüpft.',
    ERR_JWT_LOGIN_IDENTITY_PROVIDER_LINKED: 'Ein Konto dieses Anbieters ist bereits verknüpft: lösen Sie es zuerst.',
    ERR_JWT_LOGIN_IDENTITY_NOT_FOUND: 'Kein Konto dieses Anbieters ist verknüpft.',
    ERR_JWT_LOGIN_IDENTITY_LAST: 'Dies ist die einzige Anmeldemöglichkeit für das Konto: fügen Sie zuerst ein Passwort, einen Passkey oder einen anderen Anbieter hinzu.',
    ERR_JWT_LOGIN_USER_LOCKED: 'Dieses Konto ist gesperrt; wenden Sie sich an den Support der Website.',
    ERR_JWT_LOGIN_IMPERSONATION_REFUSED: 'Nicht möglich, während Sie als ein anderer Benutzer handeln: dafür ist die eigene Anmeldung des Benutzers nötig.',
    ERR_JWT_LOGIN_API_KEYS_DISABLED: 'API-Schlüssel sind nicht aktiviert.',
    ERR_JWT_LOGIN_API_KEY_INVALID: 'Der API-Schlüssel fehlt, ist unbekannt, abgelaufen oder widerrufen.',
    ERR_JWT_LOGIN_API_KEY_SCOPE: 'Dem API-Schlüssel fehlt ein Scope, den diese Route benötigt.',
    ERR_JWT_LOGIN_API_KEY_RATE_LIMITED: 'Zu viele Anfragen mit diesem API-Schlüssel; versuchen Sie es nach der in Retry-After genannten Zeit erneut.',
    ERR_JWT_LOGIN_API_KEY_LIMIT: 'Das Konto hat bereits so viele API-Schlüssel wie erlaubt; löschen Sie zuerst einen.',
    ERR_JWT_LOGIN_API_KEY_NOT_FOUND: 'Kein solcher API-Schlüssel.',
    ERR_JWT_LOGIN_API_KEY_REQUEST_INVALID: 'Ein Scope ist keiner, den diese Website deklariert, oder expires_in liegt außerhalb des erlaubten Bereichs.',
    ERR_JWT_LOGIN_API_KEY_NOT_ALLOWED: 'Ein API-Schlüssel meldet hier nicht an: verwenden Sie ein Token aus einer Anmeldung.'
  },
  fields: {
    body: 'Feld `{{field}}` im Body',
    querystring: 'Query-Parameter `{{field}}`',
    params: 'Pfadparameter `{{field}}`',
    headers: 'Header `{{field}}`',
    other: 'Feld `{{field}}`'
  },
  messages: {
    tokenRevoked: 'Das Token wurde widerrufen.',
    sessionEnded: 'Die Sitzung wurde beendet.',
    everySessionEnded: 'Alle Sitzungen wurden beendet.',
    everyOtherSessionEnded: 'Alle anderen Sitzungen wurden beendet.',
    deviceForgotten: 'Das Gerät gilt nicht mehr als vertrauenswürdig.',
    loggedOut: 'Sie wurden abgemeldet.',
    passkeyRenamed: 'Der Passkey wurde umbenannt.',
    passkeyDeleted: 'Der Passkey wurde gelöscht.',
    resetRequested: 'Falls die E-Mail-Adresse zu einem Konto gehört, wurde ein Code zum Zurücksetzen an sie gesendet.',
    passwordChanged: 'Das Passwort wurde geändert.',
    userCreated: 'Der Benutzer wurde erfolgreich angelegt.',
    userDeleted: 'Der Benutzer wurde erfolgreich gelöscht.',
    verificationSent: 'Falls die Adresse zu einem noch nicht bestätigten Konto gehört, wurde ein Code an sie gesendet.',
    emailVerified: 'Die E-Mail-Adresse ist bestätigt.',
    accountPasswordChanged: 'Das Passwort wurde geändert.',
    emailChangeSent: 'Ein Code wurde an die neue Adresse gesendet; die E-Mail-Adresse wird geändert, sobald er eingegeben ist.',
    emailChanged: 'Die E-Mail-Adresse wurde geändert.',
    emailReverted: 'Die bisherige E-Mail-Adresse wurde wiederhergestellt, und alle Sitzungen wurden beendet.',
    twoFactorMethodChanged: 'Der zweite Faktor wurde geändert.',
    twoFactorDisabled: 'Der zweite Faktor ist deaktiviert.',
    emailSignInSent: 'Falls mit dieser Adresse eine Anmeldung möglich ist, wurde ein Code an sie gesendet.',
    identityLinked: 'Das Konto des Anbieters ist verknüpft.',
    identityUnlinked: 'Die Verknüpfung mit dem Konto des Anbieters ist gelöst.'
  },
  mails: {
    reset: {
      subject: 'Ihr Code zum Zurücksetzen des Passworts für {{site_name}}',
      text: [
        'Guten Tag {{display_name}},',
        '',
        'jemand hat angefordert, das Passwort des Kontos {{email}} bei {{site_name}} zurückzusetzen.',
        'Verwenden Sie zum Zurücksetzen diesen Code: {{code}}',
        '',
        'Er ist nur einmal gültig und läuft in {{expires_in_minutes}} Minuten ab.',
        'Falls Sie das nicht angefordert haben, ignorieren Sie diese E-Mail; Ihr Passwort bleibt unverändert.'
      ].join('\n'),
      html: [
        '<p>Guten Tag {{display_name}},</p>',
        '<p>jemand hat angefordert, das Passwort des Kontos {{email}} bei {{site_name}} zurückzusetzen.</p>',
        '<p>Verwenden Sie zum Zurücksetzen diesen Code: <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong></p>',
        '<p>Er ist nur einmal gültig und läuft in {{expires_in_minutes}} Minuten ab.<br>',
        'Falls Sie das nicht angefordert haben, ignorieren Sie diese E-Mail; Ihr Passwort bleibt unverändert.</p>'
      ].join('\n')
    },
    emailCode: {
      subject: 'Ihr Anmeldecode',
      text: 'Ihr Anmeldecode lautet {{code}}. Er ist {{minutes}} Minuten lang gültig und kann nur einmal verwendet werden.\n\nWenn Sie nicht versucht haben, sich anzumelden, ändern Sie Ihr Passwort.',
      html: '<p>Ihr Anmeldecode lautet <strong>{{code}}</strong>. Er ist {{minutes}} Minuten lang gültig und kann nur einmal verwendet werden.</p><p>Wenn Sie nicht versucht haben, sich anzumelden, ändern Sie Ihr Passwort.</p>'
    },
    verifyEmail: {
      subject: 'Bestätigen Sie Ihre E-Mail-Adresse für {{site_name}}',
      text: [
        'Guten Tag {{display_name}},',
        '',
        'Ihr Bestätigungscode lautet {{code}}. Geben Sie ihn ein, um zu bestätigen, dass {{email}} Ihre Adresse für {{site_name}} ist. Er ist nur einmal gültig und läuft in {{expires_in_minutes}} Minuten ab.',
        '',
        'Falls Sie kein Konto angelegt haben, ignorieren Sie diese E-Mail.'
      ].join('\n'),
      html: [
        '<p>Guten Tag {{display_name}},</p>',
        '<p>Ihr Bestätigungscode lautet <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong>. Geben Sie ihn ein, um zu bestätigen, dass {{email}} Ihre Adresse für {{site_name}} ist. Er ist nur einmal gültig und läuft in {{expires_in_minutes}} Minuten ab.</p>',
        '<p>Falls Sie kein Konto angelegt haben, ignorieren Sie diese E-Mail.</p>'
      ].join('')
    },
    emailChange: {
      subject: 'Bestätigen Sie Ihre neue E-Mail-Adresse für {{site_name}}',
      text: [
        'Guten Tag {{display_name}},',
        '',
        'Ihr Bestätigungscode lautet {{code}}. Geben Sie ihn ein, um {{email}} zur Adresse Ihres Kontos bei {{site_name}} zu machen. Er ist nur einmal gültig und läuft in {{expires_in_minutes}} Minuten ab.',
        '',
        'Falls Sie das nicht angefordert haben, ignorieren Sie diese E-Mail; es ändert sich nichts.'
      ].join('\n'),
      html: [
        '<p>Guten Tag {{display_name}},</p>',
        '<p>Ihr Bestätigungscode lautet <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong>. Geben Sie ihn ein, um {{email}} zur Adresse Ihres Kontos bei {{site_name}} zu machen. Er ist nur einmal gültig und läuft in {{expires_in_minutes}} Minuten ab.</p>',
        '<p>Falls Sie das nicht angefordert haben, ignorieren Sie diese E-Mail; es ändert sich nichts.</p>'
      ].join('')
    },
    emailChanged: {
      subject: 'Die E-Mail-Adresse Ihres Kontos bei {{site_name}} wurde geändert',
      text: [
        'Guten Tag {{display_name}},',
        '',
        'die E-Mail-Adresse Ihres Kontos bei {{site_name}} ist nicht mehr {{email}}.',
        'Falls Sie sie nicht geändert haben, stellen Sie die bisherige Adresse wieder her. Ihr Wiederherstellungscode lautet: {{code}}',
        'Er ist innerhalb von {{expires_in_days}} Tagen einmal gültig und beendet alle Sitzungen des Kontos.'
      ].join('\n'),
      html: [
        '<p>Guten Tag {{display_name}},</p>',
        '<p>die E-Mail-Adresse Ihres Kontos bei {{site_name}} ist nicht mehr {{email}}.</p>',
        '<p>Falls Sie sie nicht geändert haben, stellen Sie die bisherige Adresse wieder her. Ihr Wiederherstellungscode lautet: <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong><br>Er ist innerhalb von {{expires_in_days}} Tagen einmal gültig und beendet alle Sitzungen des Kontos.</p>'
      ].join('')
    },
    passwordChanged: {
      subject: 'Ihr Passwort für {{site_name}} wurde geändert',
      text: [
        'Guten Tag {{display_name}},',
        '',
        'das Passwort Ihres Kontos {{email}} bei {{site_name}} wurde soeben geändert, und Ihre anderen Sitzungen wurden beendet.',
        'Falls Sie es nicht geändert haben, setzen Sie Ihr Passwort sofort zurück.'
      ].join('\n'),
      html: [
        '<p>Guten Tag {{display_name}},</p>',
        '<p>das Passwort Ihres Kontos {{email}} bei {{site_name}} wurde soeben geändert, und Ihre anderen Sitzungen wurden beendet.</p>',
        '<p>Falls Sie es nicht geändert haben, setzen Sie Ihr Passwort sofort zurück.</p>'
      ].join('')
    },
    emailSignIn: {
      subject: 'Ihr Anmeldecode für {{site_name}}',
      text: [
        'Ihr Anmeldecode lautet {{code}}. Geben Sie ihn ein, um sich bei {{site_name}} als {{email}} anzumelden. Er ist nur einmal gültig und läuft in {{expires_in_minutes}} Minuten ab.',
        '',
        'Falls Sie ihn nicht angefordert haben, ignorieren Sie diese E-Mail: Ohne den Code kann sich niemand anmelden.'
      ].join('\n'),
      html: [
        '<p>Ihr Anmeldecode lautet <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong>. Geben Sie ihn ein, um sich bei {{site_name}} als {{email}} anzumelden. Er ist nur einmal gültig und läuft in {{expires_in_minutes}} Minuten ab.</p>',
        '<p>Falls Sie ihn nicht angefordert haben, ignorieren Sie diese E-Mail: Ohne den Code kann sich niemand anmelden.</p>'
      ].join('')
    },
    emailSignInLink: {
      subject: 'Ihr Anmeldecode für {{site_name}}',
      text: [
        'Ihr Anmeldecode lautet {{code}}. Geben Sie ihn ein, um sich bei {{site_name}} als {{email}} anzumelden, oder öffnen Sie diesen Link auf dem Gerät, auf dem Sie den Code angefordert haben:',
        '{{link}}',
        '',
        'Der Code ist nur einmal gültig und läuft in {{expires_in_minutes}} Minuten ab. Falls Sie ihn nicht angefordert haben, ignorieren Sie diese E-Mail: Ohne den Code kann sich niemand anmelden.'
      ].join('\n'),
      html: [
        '<p>Ihr Anmeldecode lautet <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong>. Geben Sie ihn ein, um sich bei {{site_name}} als {{email}} anzumelden, oder öffnen Sie auf dem Gerät, auf dem Sie den Code angefordert haben, <a href="{{link}}">diesen Anmeldelink</a>.</p>',
        '<p>Der Code ist nur einmal gültig und läuft in {{expires_in_minutes}} Minuten ab. Falls Sie ihn nicht angefordert haben, ignorieren Sie diese E-Mail: Ohne den Code kann sich niemand anmelden.</p>'
      ].join('')
    }
  }
}
