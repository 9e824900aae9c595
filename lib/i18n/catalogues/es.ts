/**
 * Spanish (español), neutral and addressing the user as "usted": the
 * messages and mails for every `es-*` client.
 */
import type { Catalogue } from '../catalogue.js'

export const es: Catalogue = {
  errors: {
    ERR_JWT_LOGIN_TOKEN_MALFORMED: 'El JWT no consta de tres segmentos separados por puntos.',
    ERR_JWT_LOGIN_TOKEN_ALGORITHM: 'El algoritmo del JWT no es el configurado.',
    ERR_JWT_LOGIN_TOKEN_KID_UNKNOWN: 'No se reconoce el identificador de clave del JWT.',
    ERR_JWT_LOGIN_TOKEN_SIGNATURE: 'La firma del JWT no es válida.',
    ERR_JWT_LOGIN_TOKEN_CLAIM_INVALID: 'Las declaraciones (claims) del JWT no son válidas para este servicio.',
    ERR_JWT_LOGIN_TOKEN_NOT_YET_VALID: 'El JWT todavía no es válido.',
    ERR_JWT_LOGIN_TOKEN_EXPIRED: 'El JWT ha expirado.',
    ERR_JWT_LOGIN_TOKEN_DECODE: 'Los segmentos del JWT no son JSON válido codificado en base64url.',
    ERR_JWT_LOGIN_AUTHORIZATION_MALFORMED: 'El encabezado Authorization no contiene un token Bearer.',
    ERR_JWT_LOGIN_INTERIM_TOKEN_MISSING: 'Falta el JWT intermedio.',
    ERR_JWT_LOGIN_TOKEN_USER_GONE: 'El usuario de este JWT ya no existe.',
    ERR_JWT_LOGIN_REFRESH_USER_GONE: 'El usuario de este token de actualización ya no existe.',
    ERR_JWT_LOGIN_AUTH_CODE_INVALID: 'El auth code no es válido o ha expirado.',
    ERR_JWT_LOGIN_AUTH_CODE_MISSING: 'El auth code es obligatorio.',
    ERR_JWT_LOGIN_AUTH_DISABLED: 'La autenticación no está habilitada.',
    ERR_JWT_LOGIN_LOGIN_MISSING: 'Indique exactamente uno de los campos email, username o login.',
    ERR_JWT_LOGIN_PASSWORD_MISSING: 'Indique exactamente uno de los campos password o password_hash.',
    ERR_JWT_LOGIN_WRONG_CREDENTIALS: 'Las credenciales son incorrectas.',
    ERR_JWT_LOGIN_PASSWORD_HASH_DISABLED: 'El inicio de sesión con password_hash no está habilitado.',
    ERR_JWT_LOGIN_REFRESH_TOKEN_MISSING: 'Falta el campo refresh_token.',
    ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID: 'El token de actualización no es válido, ha expirado o ya se usó.',
    ERR_JWT_LOGIN_USER_CREATE_FAILED: 'No se pudo crear el usuario.',
    ERR_JWT_LOGIN_JWT_MISSING: 'Falta el JWT.',
    ERR_JWT_LOGIN_BEARER_MISSING: 'Falta el JWT.',
    ERR_JWT_LOGIN_TOKEN_REVOKED: 'El JWT fue revocado.',
    ERR_JWT_LOGIN_REFRESH_DISABLED: 'Los tokens de actualización no están habilitados.',
    ERR_JWT_LOGIN_VALIDATE_DISABLED: 'El punto de conexión validate no está habilitado.',
    ERR_JWT_LOGIN_REVOKE_DISABLED: 'El punto de conexión revoke no está habilitado.',
    ERR_JWT_LOGIN_TWO_FACTOR_UNAVAILABLE: 'La autenticación de dos factores no está disponible.',
    ERR_JWT_LOGIN_INTERIM_TOKEN_INVALID: 'El JWT intermedio no es válido, ha expirado o no es un token intermedio.',
    ERR_JWT_LOGIN_CHALLENGE_CLOSED: 'El desafío de autenticación de dos factores no existe, ha expirado, ya se usó o se cerró.',
    ERR_JWT_LOGIN_TWO_FACTOR_LOCKED: 'Demasiados intentos fallidos de autenticación de dos factores.',
    ERR_JWT_LOGIN_TWO_FACTOR_CODE_MISSING: 'Falta el código de autenticación de dos factores.',
    ERR_JWT_LOGIN_TWO_FACTOR_CODE_WRONG: 'El código de autenticación de dos factores es incorrecto.',
    ERR_JWT_LOGIN_INTERIM_TOKEN_USED: 'Aquí no se puede usar un token intermedio; complete primero el paso de autenticación de dos factores.',
    ERR_JWT_LOGIN_TWO_FACTOR_DISABLED: 'El inicio de sesión con dos factores está desactivado, pero esta cuenta lo requiere.',
    ERR_JWT_LOGIN_RESET_DISABLED: 'El restablecimiento de contraseña no está habilitado.',
    ERR_JWT_LOGIN_RESET_EMAIL_MISSING: 'Falta el campo email.',
    ERR_JWT_LOGIN_RESET_CODE_MISSING: 'Falta el campo code.',
    ERR_JWT_LOGIN_RESET_PASSWORD_MISSING: 'Falta el campo new_password.',
    ERR_JWT_LOGIN_RESET_CODE_INVALID: 'El código de restablecimiento no es válido o ha expirado.',
    ERR_JWT_LOGIN_RESET_EMAIL_MALFORMED: 'El campo email no contiene una dirección de correo electrónico válida.',
    ERR_JWT_LOGIN_RESET_REQUEST_EMAIL_INVALID: 'Falta el campo email o no contiene una dirección de correo electrónico válida.',
    ERR_JWT_LOGIN_PASSWORD_POLICY: 'La nueva contraseña no cumple la política de contraseñas.',
    ERR_JWT_LOGIN_RESET_INCOMPLETE: 'La contraseña no se cambió, pero es posible que se hayan cerrado sesiones abiertas; vuelva a intentarlo con el código.',
    ERR_JWT_LOGIN_REGISTER_DISABLED: 'El registro no está permitido.',
    ERR_JWT_LOGIN_REGISTER_FIELDS_MISSING: 'Indique un correo electrónico y una contraseña.',
    ERR_JWT_LOGIN_REGISTER_EMAIL_INVALID: 'El correo electrónico no es válido, o el campo email o user_login supera los 60 caracteres.',
    ERR_JWT_LOGIN_REGISTER_DOMAIN: 'Los usuarios de este dominio de correo electrónico no pueden registrarse.',
    ERR_JWT_LOGIN_REGISTER_EMAIL_NOT_ASCII: 'El correo electrónico debe escribirse en ASCII, con un dominio internacionalizado en su forma xn--; se rechazan las letras que solo se parecen a las ASCII.',
    ERR_JWT_LOGIN_USER_EXISTS: 'El usuario ya existe.',
    ERR_JWT_LOGIN_DELETE_DISABLED: 'La eliminación de usuarios no está habilitada.',
    ERR_JWT_LOGIN_DELETE_INCOMPLETE: 'El usuario no se eliminó, pero sus sesiones se cerraron; inicie sesión y vuelva a intentarlo.',
    ERR_JWT_LOGIN_REGISTER_SIGN_IN_FAILED: 'El usuario se creó, pero no se pudo iniciar su sesión; inicie sesión con su contraseña.',
    ERR_JWT_LOGIN_PROVIDER_UNKNOWN: 'No se reconoce el proveedor.',
    ERR_JWT_LOGIN_PROVIDER_DISABLED: 'El proveedor no está habilitado.',
    ERR_JWT_LOGIN_PROVIDER_CODE_MISSING: 'Indique el campo code o id_token.',
    ERR_JWT_LOGIN_PROVIDER_CODE_INVALID: 'El proveedor rechazó el código.',
    ERR_JWT_LOGIN_ID_TOKEN_INVALID: 'El token de ID no es válido.',
    ERR_JWT_LOGIN_PROVIDER_USER_NOT_FOUND: 'Ningún usuario coincide y el registro está desactivado.',
    ERR_JWT_LOGIN_EMAIL_UNVERIFIED: 'El proveedor no ha verificado la dirección de correo electrónico.',
    ERR_JWT_LOGIN_RATE_LIMITED: 'Demasiadas solicitudes; vuelva a intentarlo más tarde.',
    ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE: 'Una dependencia no está disponible; no se cambió nada.',
    ERR_JWT_LOGIN_PROVIDER_TIMEOUT: 'El proveedor de identidad no respondió a tiempo.',
    ERR_JWT_LOGIN_PROVIDER_ERROR: 'El proveedor de identidad respondió con un error.',
    ERR_JWT_LOGIN_BAD_REQUEST: 'La solicitud está mal formada.',
    ERR_JWT_LOGIN_NOT_FOUND: 'Esta ruta no existe.',
    ERR_JWT_LOGIN_ORIGIN_NOT_ALLOWED: 'El origen (Origin) de esta solicitud no está permitido.',
    ERR_JWT_LOGIN_CSRF_TOKEN_INVALID: 'Falta el token CSRF o es incorrecto.',
    ERR_JWT_LOGIN_ID_TOKEN_REPLAYED: 'El token de ID ya se usó.',
    ERR_JWT_LOGIN_PROVIDER_EMAIL_MISMATCH: 'La cuenta encontrada no tiene la dirección de correo electrónico verificada por el proveedor.',
    ERR_JWT_LOGIN_SESSIONS_DISABLED: 'La administración de sesiones no está habilitada.',
    ERR_JWT_LOGIN_SESSION_NOT_FOUND: 'Esta sesión no existe.',
    ERR_JWT_LOGIN_DEVICE_NOT_FOUND: 'Este dispositivo de confianza no existe.',
    ERR_JWT_LOGIN_PASSKEYS_DISABLED: 'Las llaves de acceso no están habilitadas.',
    ERR_JWT_LOGIN_PASSKEY_REFUSED: 'No se pudo verificar la llave de acceso; solicite nuevas opciones y vuelva a intentarlo.',
    ERR_JWT_LOGIN_PASSKEY_ORIGIN: 'La operación con la llave de acceso se realizó en un origen que no figura en passkeys.origins.',
    ERR_JWT_LOGIN_PASSKEY_RP_ID: 'La llave de acceso está vinculada a un identificador de parte de confianza distinto de passkeys.rpId.',
    ERR_JWT_LOGIN_PASSKEY_NOT_FOUND: 'Esta llave de acceso no existe.',
    ERR_JWT_LOGIN_REAUTHENTICATION_REQUIRED: 'Se requiere un inicio de sesión más reciente: confirme su identidad con una contraseña, un código o una llave de acceso.',
    ERR_JWT_LOGIN_PASSKEY_REGISTRATION_REFUSED: 'No se pudo verificar la nueva llave de acceso; solicite nuevas opciones y vuelva a intentarlo.',
    ERR_JWT_LOGIN_PASSKEY_EXISTS: 'Esta llave de acceso ya está registrada.',
    ERR_JWT_LOGIN_PASSKEY_LIMIT: 'La cuenta ya tiene el número máximo de llaves de acceso; elimine una primero.',
    ERR_JWT_LOGIN_PASSKEY_AUTHENTICATOR_NOT_ALLOWED: 'Este tipo de autenticador no está permitido aquí (passkeys.aaguids).',
    ERR_JWT_LOGIN_STEP_UP_FACTOR_MISSING: 'La confirmación de identidad requiere una contraseña, un código, una llave de acceso, o bien una contraseña y un código.',
    ERR_JWT_LOGIN_BUSY: 'Demasiadas solicitudes esperan que se verifique o se cifre una contraseña; vuelva a intentarlo más tarde.',
    ERR_JWT_LOGIN_EMAIL_NOT_VERIFIED: 'La dirección de correo electrónico de esta cuenta aún no está verificada: indique el código que se envió a esa dirección o solicite uno nuevo.',
    ERR_JWT_LOGIN_PROVIDER_ACCOUNT_UNVERIFIED: 'Ya existe una cuenta con este correo electrónico, pero su dirección nunca se verificó: restablezca la contraseña de esa cuenta por correo electrónico, lo que comprueba la dirección, y luego inicie sesión.',
    ERR_JWT_LOGIN_ACCOUNT_DISABLED: 'Esta función de la cuenta no está habilitada.',
    ERR_JWT_LOGIN_ACCOUNT_CODE_INVALID: 'El código no es válido o ha expirado.',
    ERR_JWT_LOGIN_EMAIL_TAKEN: 'Esta dirección de correo electrónico no se puede usar para esta cuenta.',
    ERR_JWT_LOGIN_EMAIL_INVALID: 'El nuevo correo electrónico no es válido, supera los 100 caracteres, no está escrito en ASCII o ya es el de la cuenta.',
    ERR_JWT_LOGIN_EMAIL_VERIFIED_ALREADY: 'La dirección de correo electrónico de esta cuenta ya está verificada.',
    ERR_JWT_LOGIN_CURRENT_PASSWORD_WRONG: 'La contraseña actual es incorrecta.',
    ERR_JWT_LOGIN_TOTP_CODE_WRONG: 'El código no coincide con el nuevo secreto; compruebe el reloj de la aplicación y pruebe con su siguiente código.',
    ERR_JWT_LOGIN_TOTP_NOT_PENDING: 'Ningún secreto TOTP nuevo espera su primer código; vuelva a iniciar la configuración.',
    ERR_JWT_LOGIN_TWO_FACTOR_METHOD_UNAVAILABLE: 'Esta cuenta todavía no puede usar ese método; configúrelo primero.',
    ERR_JWT_LOGIN_ACCOUNT_INCOMPLETE: 'El cambio no se realizó, pero es posible que se hayan cerrado sesiones; vuelva a intentarlo.',
    ERR_JWT_LOGIN_REGISTER_LOGIN_INVALID: 'El campo user_login solo puede contener las letras a-z y A-Z, los dígitos 0-9, espacios y _ . - @, sin espacios al principio ni al final ni dos seguidos, y ninguna dirección de correo que no sea la de la cuenta.',
    ERR_JWT_LOGIN_EMAIL_SIGN_IN_DISABLED: 'El inicio de sesión por correo electrónico no está habilitado.',
    ERR_JWT_LOGIN_EMAIL_SIGN_IN_EMAIL_INVALID: 'Falta el campo email o no contiene una dirección de correo electrónico válida.',
    ERR_JWT_LOGIN_EMAIL_SIGN_IN_CODE_MISSING: 'Indique el código que recibió por correo electrónico.',
    ERR_JWT_LOGIN_EMAIL_SIGN_IN_CODE_INVALID: 'El código es incorrecto, ya se usó o ha expirado; si sigue sin funcionar, solicite uno nuevo.',
    ERR_JWT_LOGIN_IDENTITY_TAKEN: 'Esta cuenta del proveedor está vinculada a otra cuenta.',
    ERR_JWT_LOGIN_IDENTITY_PROVIDER_LINKED: 'Ya hay una cuenta de este proveedor vinculada: desvincúlela primero.',
    ERR_JWT_LOGIN_IDENTITY_NOT_FOUND: 'No hay ninguna cuenta de este proveedor vinculada.',
    ERR_JWT_LOGIN_IDENTITY_LAST: 'Es la única forma de iniciar sesión en la cuenta: añada primero una contraseña, una llave de acceso u otro proveedor.',
    ERR_JWT_LOGIN_USER_LOCKED: 'Esta cuenta está bloqueada; póngase en contacto con el soporte del sitio.',
    ERR_JWT_LOGIN_IMPERSONATION_REFUSED: 'No mientras actúa como otro usuario: esto requiere el inicio de sesión del propio usuario.',
    ERR_JWT_LOGIN_API_KEYS_DISABLED: 'Las claves de API no están habilitadas.',
    ERR_JWT_LOGIN_API_KEY_INVALID: 'La clave de API falta, es desconocida, ha caducado o ha sido revocada.',
    ERR_JWT_LOGIN_API_KEY_SCOPE: 'La clave de API no tiene un ámbito que esta ruta necesita.',
    ERR_JWT_LOGIN_API_KEY_RATE_LIMITED: 'Demasiadas solicitudes con esta clave de API; reintente tras el tiempo que indica Retry-After.',
    ERR_JWT_LOGIN_API_KEY_LIMIT: 'La cuenta ya tiene tantas claves de API como puede; elimine una primero.',
    ERR_JWT_LOGIN_API_KEY_NOT_FOUND: 'No existe esa clave de API.',
    ERR_JWT_LOGIN_API_KEY_REQUEST_INVALID: 'Un ámbito no es uno de los que declara este sitio, o expires_in está fuera del rango permitido.',
    ERR_JWT_LOGIN_API_KEY_NOT_ALLOWED: 'Una clave de API no sirve aquí: use un token de un inicio de sesión.'
  },
  fields: {
    body: 'campo `{{field}}` del cuerpo de la solicitud',
    querystring: 'parámetro de consulta `{{field}}`',
    params: 'parámetro de ruta `{{field}}`',
    headers: 'encabezado `{{field}}`',
    other: 'campo `{{field}}`'
  },
  messages: {
    tokenRevoked: 'El token fue revocado.',
    sessionEnded: 'La sesión se cerró.',
    everySessionEnded: 'Se cerraron todas las sesiones.',
    everyOtherSessionEnded: 'Se cerraron todas las demás sesiones.',
    deviceForgotten: 'El dispositivo ya no es de confianza.',
    loggedOut: 'Sesión cerrada.',
    passkeyRenamed: 'Se cambió el nombre de la llave de acceso.',
    passkeyDeleted: 'Se eliminó la llave de acceso.',
    resetRequested: 'Si el correo electrónico pertenece a una cuenta, se envió a esa dirección un código de restablecimiento.',
    passwordChanged: 'Se cambió la contraseña.',
    userCreated: 'El usuario se creó correctamente.',
    userDeleted: 'El usuario se eliminó correctamente.',
    verificationSent: 'Si la dirección pertenece a una cuenta que aún no está verificada, se envió un código a esa dirección.',
    emailVerified: 'La dirección de correo electrónico está verificada.',
    accountPasswordChanged: 'Se cambió la contraseña.',
    emailChangeSent: 'Se envió un código a la nueva dirección; el correo electrónico se cambiará en cuanto se indique ese código.',
    emailChanged: 'Se cambió la dirección de correo electrónico.',
    emailReverted: 'Se restauró la dirección de correo electrónico anterior y se cerraron todas las sesiones.',
    twoFactorMethodChanged: 'Se cambió el segundo factor.',
    twoFactorDisabled: 'El segundo factor está desactivado.',
    emailSignInSent: 'Si la dirección puede usarse para iniciar sesión, se envió un código a esa dirección.',
    identityLinked: 'La cuenta del proveedor está vinculada.',
    identityUnlinked: 'La cuenta del proveedor está desvinculada.'
  },
  mails: {
    reset: {
      subject: 'Su código para restablecer la contraseña de {{site_name}}',
      text: [
        'Hola, {{display_name}}:',
        '',
        'Alguien solicitó restablecer la contraseña de la cuenta {{email}} en {{site_name}}.',
        'Para restablecerla, indique este código: {{code}}',
        '',
        'Solo se puede usar una vez y expira en {{expires_in_minutes}} minutos.',
        'Si no lo solicitó, ignore este mensaje; su contraseña seguirá siendo la misma.'
      ].join('\n'),
      html: [
        '<p>Hola, {{display_name}}:</p>',
        '<p>Alguien solicitó restablecer la contraseña de la cuenta {{email}} en {{site_name}}.</p>',
        '<p>Para restablecerla, indique este código: <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong></p>',
        '<p>Solo se puede usar una vez y expira en {{expires_in_minutes}} minutos.<br>',
        'Si no lo solicitó, ignore este mensaje; su contraseña seguirá siendo la misma.</p>'
      ].join('\n')
    },
    emailCode: {
      subject: 'Su código de inicio de sesión',
      text: 'Para iniciar sesión, indique este código: {{code}}. Es válido durante {{minutes}} minutos y solo se puede usar una vez.\n\nSi no intentó iniciar sesión, cambie su contraseña.',
      html: '<p>Para iniciar sesión, indique este código: <strong>{{code}}</strong>. Es válido durante {{minutes}} minutos y solo se puede usar una vez.</p><p>Si no intentó iniciar sesión, cambie su contraseña.</p>'
    },
    verifyEmail: {
      subject: 'Verifique su dirección de correo electrónico de {{site_name}}',
      text: [
        'Hola, {{display_name}}:',
        '',
        'Para confirmar que {{email}} es su dirección en {{site_name}}, indique este código: {{code}}. Solo se puede usar una vez y expira en {{expires_in_minutes}} minutos.',
        '',
        'Si no creó una cuenta, ignore este mensaje.'
      ].join('\n'),
      html: [
        '<p>Hola, {{display_name}}:</p>',
        '<p>Para confirmar que {{email}} es su dirección en {{site_name}}, indique este código: <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong>. Solo se puede usar una vez y expira en {{expires_in_minutes}} minutos.</p>',
        '<p>Si no creó una cuenta, ignore este mensaje.</p>'
      ].join('')
    },
    emailChange: {
      subject: 'Confirme su nueva dirección de correo electrónico de {{site_name}}',
      text: [
        'Hola, {{display_name}}:',
        '',
        'Para que {{email}} pase a ser la dirección de su cuenta de {{site_name}}, indique este código: {{code}}. Solo se puede usar una vez y expira en {{expires_in_minutes}} minutos.',
        '',
        'Si no lo solicitó, ignore este mensaje; no cambiará nada.'
      ].join('\n'),
      html: [
        '<p>Hola, {{display_name}}:</p>',
        '<p>Para que {{email}} pase a ser la dirección de su cuenta de {{site_name}}, indique este código: <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong>. Solo se puede usar una vez y expira en {{expires_in_minutes}} minutos.</p>',
        '<p>Si no lo solicitó, ignore este mensaje; no cambiará nada.</p>'
      ].join('')
    },
    emailChanged: {
      subject: 'Se cambió la dirección de correo electrónico de su cuenta de {{site_name}}',
      text: [
        'Hola, {{display_name}}:',
        '',
        'La dirección de correo electrónico de su cuenta de {{site_name}} ya no es {{email}}.',
        'Si no la cambió usted, restaure la dirección anterior con este código: {{code}}',
        'Solo se puede usar una vez en un plazo de {{expires_in_days}} días y cierra todas las sesiones de la cuenta.'
      ].join('\n'),
      html: [
        '<p>Hola, {{display_name}}:</p>',
        '<p>La dirección de correo electrónico de su cuenta de {{site_name}} ya no es {{email}}.</p>',
        '<p>Si no la cambió usted, restaure la dirección anterior con este código: <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong><br>Solo se puede usar una vez en un plazo de {{expires_in_days}} días y cierra todas las sesiones de la cuenta.</p>'
      ].join('')
    },
    passwordChanged: {
      subject: 'Se cambió su contraseña de {{site_name}}',
      text: [
        'Hola, {{display_name}}:',
        '',
        'La contraseña de su cuenta {{email}} en {{site_name}} se acaba de cambiar y se cerraron sus demás sesiones.',
        'Si no la cambió usted, restablezca su contraseña de inmediato.'
      ].join('\n'),
      html: [
        '<p>Hola, {{display_name}}:</p>',
        '<p>La contraseña de su cuenta {{email}} en {{site_name}} se acaba de cambiar y se cerraron sus demás sesiones.</p>',
        '<p>Si no la cambió usted, restablezca su contraseña de inmediato.</p>'
      ].join('')
    },
    emailSignIn: {
      subject: 'Su código para iniciar sesión en {{site_name}}',
      text: [
        'Para iniciar sesión en {{site_name}} como {{email}}, indique este código: {{code}}. Solo se puede usar una vez y expira en {{expires_in_minutes}} minutos.',
        '',
        'Si no lo solicitó, ignore este mensaje: nadie puede iniciar sesión sin el código.'
      ].join('\n'),
      html: [
        '<p>Para iniciar sesión en {{site_name}} como {{email}}, indique este código: <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong>. Solo se puede usar una vez y expira en {{expires_in_minutes}} minutos.</p>',
        '<p>Si no lo solicitó, ignore este mensaje: nadie puede iniciar sesión sin el código.</p>'
      ].join('')
    },
    emailSignInLink: {
      subject: 'Su código para iniciar sesión en {{site_name}}',
      text: [
        'Para iniciar sesión en {{site_name}} como {{email}}, indique este código: {{code}}',
        '',
        'También puede abrir este enlace en el dispositivo desde el que hizo la solicitud:',
        '{{link}}',
        '',
        'El código solo se puede usar una vez y expira en {{expires_in_minutes}} minutos. Si no lo solicitó, ignore este mensaje: nadie puede iniciar sesión sin el código.'
      ].join('\n'),
      html: [
        '<p>Para iniciar sesión en {{site_name}} como {{email}}, indique este código: <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong></p>',
        '<p>También puede <a href="{{link}}">iniciar sesión con este enlace</a> en el dispositivo desde el que hizo la solicitud.</p>',
        '<p>El código solo se puede usar una vez y expira en {{expires_in_minutes}} minutos. Si no lo solicitó, ignore este mensaje: nadie puede iniciar sesión sin el código.</p>'
      ].join('')
    }
  }
}
