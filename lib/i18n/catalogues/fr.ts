/**
 * French (français), addressing the user as "vous": the messages and mails
 * for every `fr-*` client. Typography: a space before `:`, none before the
 * other marks; typographic apostrophes.
 */
import type { Catalogue } from '../catalogue.js'

export const fr: Catalogue = {
  errors: {
    ERR_JWT_LOGIN_TOKEN_MALFORMED: 'Le JWT n’est pas composé de trois segments séparés par des points.',
    ERR_JWT_LOGIN_TOKEN_ALGORITHM: 'L’algorithme du JWT n’est pas celui qui est configuré.',
    ERR_JWT_LOGIN_TOKEN_KID_UNKNOWN: 'L’identifiant de clé du JWT est inconnu.',
    ERR_JWT_LOGIN_TOKEN_SIGNATURE: 'La signature du JWT est invalide.',
    ERR_JWT_LOGIN_TOKEN_CLAIM_INVALID: 'Les revendications (claims) du JWT ne sont pas valides pour ce service.',
    ERR_JWT_LOGIN_TOKEN_NOT_YET_VALID: 'Le JWT n’est pas encore valide.',
    ERR_JWT_LOGIN_TOKEN_EXPIRED: 'Le JWT a expiré.',
    ERR_JWT_LOGIN_TOKEN_DECODE: 'Les segments du JWT ne sont pas du JSON valide encodé en base64url.',
    ERR_JWT_LOGIN_AUTHORIZATION_MALFORMED: 'L’en-tête Authorization ne contient pas de jeton Bearer.',
    ERR_JWT_LOGIN_INTERIM_TOKEN_MISSING: 'Le JWT intermédiaire est manquant.',
    ERR_JWT_LOGIN_TOKEN_USER_GONE: 'L’utilisateur de ce JWT n’existe plus.',
    ERR_JWT_LOGIN_REFRESH_USER_GONE: 'L’utilisateur de ce jeton d’actualisation n’existe plus.',
    ERR_JWT_LOGIN_AUTH_CODE_INVALID: 'L’auth code est invalide ou a expiré.',
    ERR_JWT_LOGIN_AUTH_CODE_MISSING: 'L’auth code est obligatoire.',
    ERR_JWT_LOGIN_AUTH_DISABLED: 'L’authentification n’est pas activée.',
    ERR_JWT_LOGIN_LOGIN_MISSING: 'Renseignez un et un seul des champs email, username ou login.',
    ERR_JWT_LOGIN_PASSWORD_MISSING: 'Renseignez un et un seul des champs password ou password_hash.',
    ERR_JWT_LOGIN_WRONG_CREDENTIALS: 'Les identifiants sont incorrects.',
    ERR_JWT_LOGIN_PASSWORD_HASH_DISABLED: 'La connexion avec password_hash n’est pas activée.',
    ERR_JWT_LOGIN_REFRESH_TOKEN_MISSING: 'Le champ refresh_token est manquant.',
    ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID: 'Le jeton d’actualisation est invalide, a expiré ou a déjà été utilisé.',
    ERR_JWT_LOGIN_USER_CREATE_FAILED: 'L’utilisateur n’a pas pu être créé.',
    ERR_JWT_LOGIN_JWT_MISSING: 'Le JWT est manquant.',
    ERR_JWT_LOGIN_BEARER_MISSING: 'Le JWT est manquant.',
    ERR_JWT_LOGIN_TOKEN_REVOKED: 'Le JWT a été révoqué.',
    ERR_JWT_LOGIN_REFRESH_DISABLED: 'Les jetons d’actualisation ne sont pas activés.',
    ERR_JWT_LOGIN_VALIDATE_DISABLED: 'Le point de terminaison validate n’est pas activé.',
    ERR_JWT_LOGIN_REVOKE_DISABLED: 'Le point de terminaison revoke n’est pas activé.',
    ERR_JWT_LOGIN_TWO_FACTOR_UNAVAILABLE: 'L’authentification à deux facteurs n’est pas disponible.',
    ERR_JWT_LOGIN_INTERIM_TOKEN_INVALID: 'Le JWT intermédiaire est invalide, a expiré ou n’est pas un jeton intermédiaire.',
    ERR_JWT_LOGIN_CHALLENGE_CLOSED: 'Le défi d’authentification à deux facteurs est inconnu, a expiré, a déjà été utilisé ou a été clos.',
    ERR_JWT_LOGIN_TWO_FACTOR_LOCKED: 'Trop de tentatives d’authentification à deux facteurs ont échoué.',
    ERR_JWT_LOGIN_TWO_FACTOR_CODE_MISSING: 'Le code d’authentification à deux facteurs est manquant.',
    ERR_JWT_LOGIN_TWO_FACTOR_CODE_WRONG: 'Le code d’authentification à deux facteurs est incorrect.',
    ERR_JWT_LOGIN_INTERIM_TOKEN_USED: 'Un jeton intermédiaire ne peut pas être utilisé ici : terminez d’abord l’étape d’authentification à deux facteurs.',
    ERR_JWT_LOGIN_TWO_FACTOR_DISABLED: 'La connexion à deux facteurs est désactivée, mais ce compte l’exige.',
    ERR_JWT_LOGIN_RESET_DISABLED: 'La réinitialisation du mot de passe n’est pas activée.',
    ERR_JWT_LOGIN_RESET_EMAIL_MISSING: 'Le champ email est manquant.',
    ERR_JWT_LOGIN_RESET_CODE_MISSING: 'Le champ code est manquant.',
    ERR_JWT_LOGIN_RESET_PASSWORD_MISSING: 'Le champ new_password est manquant.',
    ERR_JWT_LOGIN_RESET_CODE_INVALID: 'Le code de réinitialisation est invalide ou a expiré.',
    ERR_JWT_LOGIN_RESET_EMAIL_MALFORMED: 'Le champ email ne contient pas d’adresse e-mail valide.',
    ERR_JWT_LOGIN_RESET_REQUEST_EMAIL_INVALID: 'Le champ email est manquant ou ne contient pas d’adresse e-mail valide.',
    ERR_JWT_LOGIN_PASSWORD_POLICY: 'Le nouveau mot de passe ne respecte pas la politique de mots de passe.',
    ERR_JWT_LOGIN_RESET_INCOMPLETE: 'Le mot de passe n’a pas été modifié, mais des sessions ouvertes ont pu être fermées : réessayez avec le code.',
    ERR_JWT_LOGIN_REGISTER_DISABLED: 'L’inscription n’est pas autorisée.',
    ERR_JWT_LOGIN_REGISTER_FIELDS_MISSING: 'Renseignez une adresse e-mail et un mot de passe.',
    ERR_JWT_LOGIN_REGISTER_EMAIL_INVALID: 'L’adresse e-mail n’est pas valide, ou le champ email ou user_login dépasse 60 caractères.',
    ERR_JWT_LOGIN_REGISTER_DOMAIN: 'Les utilisateurs de ce domaine de messagerie ne sont pas autorisés à s’inscrire.',
    ERR_JWT_LOGIN_REGISTER_EMAIL_NOT_ASCII: 'L’adresse e-mail doit être écrite en ASCII, un domaine internationalisé sous sa forme xn-- ; les lettres qui ne font que ressembler à des lettres ASCII sont refusées.',
    ERR_JWT_LOGIN_USER_EXISTS: 'L’utilisateur existe déjà.',
    ERR_JWT_LOGIN_DELETE_DISABLED: 'La suppression d’utilisateurs n’est pas activée.',
    ERR_JWT_LOGIN_DELETE_INCOMPLETE: 'L’utilisateur n’a pas été supprimé, mais ses sessions ont été fermées : reconnectez-vous et réessayez.',
    ERR_JWT_LOGIN_REGISTER_SIGN_IN_FAILED: 'L’utilisateur a été créé, mais sa connexion a échoué : connectez-vous avec son mot de passe.',
    ERR_JWT_LOGIN_PROVIDER_UNKNOWN: 'Le fournisseur est inconnu.',
    ERR_JWT_LOGIN_PROVIDER_DISABLED: 'Le fournisseur n’est pas activé.',
    ERR_JWT_LOGIN_PROVIDER_CODE_MISSING: 'Renseignez le champ code ou id_token.',
    ERR_JWT_LOGIN_PROVIDER_CODE_INVALID: 'Le fournisseur a refusé le code.',
    ERR_JWT_LOGIN_ID_TOKEN_INVALID: 'Le jeton d’ID est invalide.',
    ERR_JWT_LOGIN_PROVIDER_USER_NOT_FOUND: 'Aucun utilisateur ne correspond et l’inscription est désactivée.',
    ERR_JWT_LOGIN_EMAIL_UNVERIFIED: 'Le fournisseur n’a pas vérifié l’adresse e-mail.',
    ERR_JWT_LOGIN_RATE_LIMITED: 'Trop de requêtes : réessayez plus tard.',
    ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE: 'Une dépendance est indisponible : rien n’a été modifié.',
    ERR_JWT_LOGIN_PROVIDER_TIMEOUT: 'Le fournisseur d’identité n’a pas répondu à temps.',
    ERR_JWT_LOGIN_PROVIDER_ERROR: 'Le fournisseur d’identité a renvoyé une erreur.',
    ERR_JWT_LOGIN_BAD_REQUEST: 'La requête est mal formée.',
    ERR_JWT_LOGIN_NOT_FOUND: 'Cette route n’existe pas.',
    ERR_JWT_LOGIN_ORIGIN_NOT_ALLOWED: 'La provenance (Origin) de cette requête n’est pas autorisée.',
    ERR_JWT_LOGIN_CSRF_TOKEN_INVALID: 'Le jeton CSRF est manquant ou incorrect.',
    ERR_JWT_LOGIN_ID_TOKEN_REPLAYED: 'Le jeton d’ID a déjà été utilisé.',
    ERR_JWT_LOGIN_PROVIDER_EMAIL_MISMATCH: 'Le compte trouvé n’a pas l’adresse e-mail vérifiée par le fournisseur.',
    ERR_JWT_LOGIN_SESSIONS_DISABLED: 'La gestion des sessions n’est pas activée.',
    ERR_JWT_LOGIN_SESSION_NOT_FOUND: 'Cette session n’existe pas.',
    ERR_JWT_LOGIN_DEVICE_NOT_FOUND: 'Cet appareil de confiance n’existe pas.',
    ERR_JWT_LOGIN_PASSKEYS_DISABLED: 'Les clés d’accès ne sont pas activées.',
    ERR_JWT_LOGIN_PASSKEY_REFUSED: 'La clé d’accès n’a pas pu être vérifiée : demandez de nouvelles options et réessayez.',
    ERR_JWT_LOGIN_PASSKEY_ORIGIN: 'L’opération de clé d’accès s’est déroulée sur une origine absente de passkeys.origins.',
    ERR_JWT_LOGIN_PASSKEY_RP_ID: 'La clé d’accès est liée à un identifiant de partie de confiance autre que passkeys.rpId.',
    ERR_JWT_LOGIN_PASSKEY_NOT_FOUND: 'Cette clé d’accès n’existe pas.',
    ERR_JWT_LOGIN_REAUTHENTICATION_REQUIRED: 'Une connexion plus récente est requise : confirmez votre identité avec un mot de passe, un code ou une clé d’accès.',
    ERR_JWT_LOGIN_PASSKEY_REGISTRATION_REFUSED: 'La nouvelle clé d’accès n’a pas pu être vérifiée : demandez de nouvelles options et réessayez.',
    ERR_JWT_LOGIN_PASSKEY_EXISTS: 'Cette clé d’accès est déjà enregistrée.',
    ERR_JWT_LOGIN_PASSKEY_LIMIT: 'Le compte a atteint le nombre maximal de clés d’accès : supprimez-en d’abord une.',
    ERR_JWT_LOGIN_PASSKEY_AUTHENTICATOR_NOT_ALLOWED: 'Ce type d’authentificateur n’est pas autorisé ici (passkeys.aaguids).',
    ERR_JWT_LOGIN_STEP_UP_FACTOR_MISSING: 'La confirmation d’identité exige un mot de passe, un code, une clé d’accès, ou bien un mot de passe et un code.',
    ERR_JWT_LOGIN_BUSY: 'Trop de requêtes attendent la vérification ou le hachage d’un mot de passe : réessayez plus tard.',
    ERR_JWT_LOGIN_EMAIL_NOT_VERIFIED: 'L’adresse e-mail de ce compte n’est pas encore vérifiée : saisissez le code qui y a été envoyé, ou demandez-en un nouveau.',
    ERR_JWT_LOGIN_PROVIDER_ACCOUNT_UNVERIFIED: 'Un compte avec cette adresse e-mail existe, mais son adresse n’a jamais été vérifiée : réinitialisez son mot de passe par e-mail, ce qui prouve l’adresse, puis connectez-vous.',
    ERR_JWT_LOGIN_ACCOUNT_DISABLED: 'Cette fonctionnalité du compte n’est pas activée.',
    ERR_JWT_LOGIN_ACCOUNT_CODE_INVALID: 'Le code est invalide ou a expiré.',
    ERR_JWT_LOGIN_EMAIL_TAKEN: 'Cette adresse e-mail ne peut pas être utilisée pour ce compte.',
    ERR_JWT_LOGIN_EMAIL_INVALID: 'La nouvelle adresse e-mail n’est pas valide, dépasse 100 caractères, n’est pas écrite en ASCII ou est déjà celle du compte.',
    ERR_JWT_LOGIN_EMAIL_VERIFIED_ALREADY: 'L’adresse e-mail de ce compte est déjà vérifiée.',
    ERR_JWT_LOGIN_CURRENT_PASSWORD_WRONG: 'Le mot de passe actuel est incorrect.',
    ERR_JWT_LOGIN_TOTP_CODE_WRONG: 'Le code ne correspond pas au nouveau secret : vérifiez l’horloge de l’application et essayez son code suivant.',
    ERR_JWT_LOGIN_TOTP_NOT_PENDING: 'Aucun nouveau secret TOTP n’attend son premier code : recommencez la configuration.',
    ERR_JWT_LOGIN_TWO_FACTOR_METHOD_UNAVAILABLE: 'Ce compte ne peut pas encore utiliser cette méthode : configurez-la d’abord.',
    ERR_JWT_LOGIN_ACCOUNT_INCOMPLETE: 'La modification n’a pas été effectuée, mais des sessions ont pu être fermées : réessayez.',
    ERR_JWT_LOGIN_REGISTER_LOGIN_INVALID: 'Le champ user_login ne peut contenir que les lettres a-z et A-Z, les chiffres 0-9, des espaces et _ . - @, sans espace au début, à la fin ni deux de suite, et aucune autre adresse e-mail que celle du compte.',
    ERR_JWT_LOGIN_EMAIL_SIGN_IN_DISABLED: 'La connexion par e-mail n’est pas activée.',
    ERR_JWT_LOGIN_EMAIL_SIGN_IN_EMAIL_INVALID: 'Le champ email est manquant ou ne contient pas d’adresse e-mail valide.',
    ERR_JWT_LOGIN_EMAIL_SIGN_IN_CODE_MISSING: 'Saisissez le code reçu par e-mail.',
    ERR_JWT_LOGIN_EMAIL_SIGN_IN_CODE_INVALID: 'Le code est incorrect, déjà utilisé ou expiré : s’il est encore refusé, demandez-en un nouveau.',
    ERR_JWT_LOGIN_IDENTITY_TAKEN: 'Ce compte du fournisseur est lié à un autre compte.',
    ERR_JWT_LOGIN_IDENTITY_PROVIDER_LINKED: 'Un compte de ce fournisseur est déjà lié : déliez-le d’abord.',
    ERR_JWT_LOGIN_IDENTITY_NOT_FOUND: 'Aucun compte de ce fournisseur n’est lié.',
    ERR_JWT_LOGIN_IDENTITY_LAST: 'C’est le seul moyen de se connecter à ce compte : ajoutez d’abord un mot de passe, une clé d’accès ou un autre fournisseur.',
    ERR_JWT_LOGIN_USER_LOCKED: 'Ce compte est verrouillé ; contactez l’assistance du site.',
    ERR_JWT_LOGIN_IMPERSONATION_REFUSED: 'Impossible en agissant au nom d’un autre utilisateur : il faut la connexion de l’utilisateur lui-même.',
    ERR_JWT_LOGIN_API_KEYS_DISABLED: 'Les clés d’API ne sont pas activées.',
    ERR_JWT_LOGIN_API_KEY_INVALID: 'La clé d’API est absente, inconnue, expirée ou révoquée.',
    ERR_JWT_LOGIN_API_KEY_SCOPE: 'La clé d’API ne porte pas une portée dont cette route a besoin.',
    ERR_JWT_LOGIN_API_KEY_RATE_LIMITED: 'Trop de requêtes avec cette clé d’API ; réessayez après le délai indiqué par Retry-After.',
    ERR_JWT_LOGIN_API_KEY_LIMIT: 'Le compte a déjà autant de clés d’API que permis ; supprimez-en une d’abord.',
    ERR_JWT_LOGIN_API_KEY_NOT_FOUND: 'Aucune clé d’API de ce nom.',
    ERR_JWT_LOGIN_API_KEY_REQUEST_INVALID: 'Une portée n’est pas déclarée par ce site, ou expires_in est hors de la plage permise.',
    ERR_JWT_LOGIN_API_KEY_NOT_ALLOWED: 'Une clé d’API ne connecte pas ici : utilisez un jeton issu d’une connexion.'
  },
  fields: {
    body: 'champ `{{field}}` du corps de la requête',
    querystring: 'paramètre de requête `{{field}}`',
    params: 'paramètre de chemin `{{field}}`',
    headers: 'en-tête `{{field}}`',
    other: 'champ `{{field}}`'
  },
  messages: {
    tokenRevoked: 'Le jeton a été révoqué.',
    sessionEnded: 'La session a été fermée.',
    everySessionEnded: 'Toutes les sessions ont été fermées.',
    everyOtherSessionEnded: 'Toutes les autres sessions ont été fermées.',
    deviceForgotten: 'L’appareil n’est plus considéré comme fiable.',
    loggedOut: 'Déconnexion effectuée.',
    passkeyRenamed: 'La clé d’accès a été renommée.',
    passkeyDeleted: 'La clé d’accès a été supprimée.',
    resetRequested: 'Si l’adresse e-mail correspond à un compte, un code de réinitialisation y a été envoyé.',
    passwordChanged: 'Le mot de passe a été modifié.',
    userCreated: 'L’utilisateur a bien été créé.',
    userDeleted: 'L’utilisateur a bien été supprimé.',
    verificationSent: 'Si l’adresse correspond à un compte qui n’est pas encore vérifié, un code y a été envoyé.',
    emailVerified: 'L’adresse e-mail est vérifiée.',
    accountPasswordChanged: 'Le mot de passe a été modifié.',
    emailChangeSent: 'Un code a été envoyé à la nouvelle adresse : l’adresse e-mail sera modifiée dès qu’il aura été saisi.',
    emailChanged: 'L’adresse e-mail a été modifiée.',
    emailReverted: 'L’ancienne adresse e-mail a été rétablie et toutes les sessions ont été fermées.',
    twoFactorMethodChanged: 'Le second facteur a été modifié.',
    twoFactorDisabled: 'Le second facteur est désactivé.',
    emailSignInSent: 'Si cette adresse permet de se connecter, un code y a été envoyé.',
    identityLinked: 'Le compte du fournisseur est lié.',
    identityUnlinked: 'Le compte du fournisseur est délié.'
  },
  mails: {
    reset: {
      subject: 'Votre code de réinitialisation de mot de passe {{site_name}}',
      text: [
        'Bonjour {{display_name}},',
        '',
        'Une réinitialisation du mot de passe du compte {{email}} sur {{site_name}} a été demandée.',
        'Pour choisir un nouveau mot de passe, saisissez ce code : {{code}}',
        '',
        'Il n’est valable qu’une seule fois et expire dans {{expires_in_minutes}} minutes.',
        'Si vous n’êtes pas à l’origine de cette demande, ignorez cet e-mail : votre mot de passe reste inchangé.'
      ].join('\n'),
      html: [
        '<p>Bonjour {{display_name}},</p>',
        '<p>Une réinitialisation du mot de passe du compte {{email}} sur {{site_name}} a été demandée.</p>',
        '<p>Pour choisir un nouveau mot de passe, saisissez ce code : <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong></p>',
        '<p>Il n’est valable qu’une seule fois et expire dans {{expires_in_minutes}} minutes.<br>',
        'Si vous n’êtes pas à l’origine de cette demande, ignorez cet e-mail : votre mot de passe reste inchangé.</p>'
      ].join('\n')
    },
    emailCode: {
      subject: 'Votre code de connexion',
      text: 'Pour vous connecter, saisissez ce code : {{code}}. Il est valable {{minutes}} minutes et ne peut servir qu’une seule fois.\n\nSi vous n’avez pas tenté de vous connecter, changez votre mot de passe.',
      html: '<p>Pour vous connecter, saisissez ce code : <strong>{{code}}</strong>. Il est valable {{minutes}} minutes et ne peut servir qu’une seule fois.</p><p>Si vous n’avez pas tenté de vous connecter, changez votre mot de passe.</p>'
    },
    verifyEmail: {
      subject: 'Vérifiez votre adresse e-mail {{site_name}}',
      text: [
        'Bonjour {{display_name}},',
        '',
        'Pour confirmer que {{email}} est bien votre adresse sur {{site_name}}, saisissez ce code : {{code}}. Il n’est valable qu’une seule fois et expire dans {{expires_in_minutes}} minutes.',
        '',
        'Si vous n’avez pas créé de compte, ignorez cet e-mail.'
      ].join('\n'),
      html: [
        '<p>Bonjour {{display_name}},</p>',
        '<p>Pour confirmer que {{email}} est bien votre adresse sur {{site_name}}, saisissez ce code : <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong>. Il n’est valable qu’une seule fois et expire dans {{expires_in_minutes}} minutes.</p>',
        '<p>Si vous n’avez pas créé de compte, ignorez cet e-mail.</p>'
      ].join('')
    },
    emailChange: {
      subject: 'Confirmez votre nouvelle adresse e-mail {{site_name}}',
      text: [
        'Bonjour {{display_name}},',
        '',
        'Pour que {{email}} devienne l’adresse de votre compte {{site_name}}, saisissez ce code : {{code}}. Il n’est valable qu’une seule fois et expire dans {{expires_in_minutes}} minutes.',
        '',
        'Si vous n’êtes pas à l’origine de cette demande, ignorez cet e-mail : rien ne sera modifié.'
      ].join('\n'),
      html: [
        '<p>Bonjour {{display_name}},</p>',
        '<p>Pour que {{email}} devienne l’adresse de votre compte {{site_name}}, saisissez ce code : <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong>. Il n’est valable qu’une seule fois et expire dans {{expires_in_minutes}} minutes.</p>',
        '<p>Si vous n’êtes pas à l’origine de cette demande, ignorez cet e-mail : rien ne sera modifié.</p>'
      ].join('')
    },
    emailChanged: {
      subject: 'L’adresse e-mail de votre compte {{site_name}} a été modifiée',
      text: [
        'Bonjour {{display_name}},',
        '',
        'L’adresse e-mail de votre compte {{site_name}} n’est plus {{email}}.',
        'Si vous ne l’avez pas modifiée, rétablissez l’ancienne adresse avec ce code : {{code}}',
        'Il n’est valable qu’une seule fois pendant {{expires_in_days}} jours et ferme toutes les sessions du compte.'
      ].join('\n'),
      html: [
        '<p>Bonjour {{display_name}},</p>',
        '<p>L’adresse e-mail de votre compte {{site_name}} n’est plus {{email}}.</p>',
        '<p>Si vous ne l’avez pas modifiée, rétablissez l’ancienne adresse avec ce code : <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong><br>Il n’est valable qu’une seule fois pendant {{expires_in_days}} jours et ferme toutes les sessions du compte.</p>'
      ].join('')
    },
    passwordChanged: {
      subject: 'Le mot de passe de votre compte {{site_name}} a été modifié',
      text: [
        'Bonjour {{display_name}},',
        '',
        'Le mot de passe de votre compte {{email}} sur {{site_name}} vient d’être modifié, et vos autres sessions ont été fermées.',
        'Si vous ne l’avez pas modifié, réinitialisez votre mot de passe sans attendre.'
      ].join('\n'),
      html: [
        '<p>Bonjour {{display_name}},</p>',
        '<p>Le mot de passe de votre compte {{email}} sur {{site_name}} vient d’être modifié, et vos autres sessions ont été fermées.</p>',
        '<p>Si vous ne l’avez pas modifié, réinitialisez votre mot de passe sans attendre.</p>'
      ].join('')
    },
    emailSignIn: {
      subject: 'Votre code de connexion à {{site_name}}',
      text: [
        'Pour vous connecter à {{site_name}} en tant que {{email}}, saisissez ce code : {{code}}. Il n’est valable qu’une seule fois et expire dans {{expires_in_minutes}} minutes.',
        '',
        'Si vous n’êtes pas à l’origine de cette demande, ignorez cet e-mail : personne ne peut se connecter sans ce code.'
      ].join('\n'),
      html: [
        '<p>Pour vous connecter à {{site_name}} en tant que {{email}}, saisissez ce code : <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong>. Il n’est valable qu’une seule fois et expire dans {{expires_in_minutes}} minutes.</p>',
        '<p>Si vous n’êtes pas à l’origine de cette demande, ignorez cet e-mail : personne ne peut se connecter sans ce code.</p>'
      ].join('')
    },
    emailSignInLink: {
      subject: 'Votre code de connexion à {{site_name}}',
      text: [
        'Pour vous connecter à {{site_name}} en tant que {{email}}, saisissez ce code : {{code}}',
        '',
        'Vous pouvez aussi ouvrir ce lien sur l’appareil depuis lequel vous avez fait la demande :',
        '{{link}}',
        '',
        'Le code n’est valable qu’une seule fois et expire dans {{expires_in_minutes}} minutes. Si vous n’êtes pas à l’origine de cette demande, ignorez cet e-mail : personne ne peut se connecter sans ce code.'
      ].join('\n'),
      html: [
        '<p>Pour vous connecter à {{site_name}} en tant que {{email}}, saisissez ce code : <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong></p>',
        '<p>Vous pouvez aussi <a href="{{link}}">vous connecter avec ce lien</a> sur l’appareil depuis lequel vous avez fait la demande.</p>',
        '<p>Le code n’est valable qu’une seule fois et expire dans {{expires_in_minutes}} minutes. Si vous n’êtes pas à l’origine de cette demande, ignorez cet e-mail : personne ne peut se connecter sans ce code.</p>'
      ].join('')
    }
  }
}
