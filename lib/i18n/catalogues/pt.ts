/**
 * Portuguese (português), pt-BR usage: senha, usuário, "você". Served for
 * every `pt-*` client, `pt-PT` included.
 */
import type { Catalogue } from '../catalogue.js'

export const pt: Catalogue = {
  errors: {
    ERR_JWT_LOGIN_TOKEN_MALFORMED: 'O JWT não é composto por três segmentos separados por pontos.',
    ERR_JWT_LOGIN_TOKEN_ALGORITHM: 'O algoritmo do JWT não é o configurado.',
    ERR_JWT_LOGIN_TOKEN_KID_UNKNOWN: 'O identificador de chave do JWT é desconhecido.',
    ERR_JWT_LOGIN_TOKEN_SIGNATURE: 'A assinatura do JWT é inválida.',
    ERR_JWT_LOGIN_TOKEN_CLAIM_INVALID: 'As declarações (claims) do JWT não são válidas para este serviço.',
    ERR_JWT_LOGIN_TOKEN_NOT_YET_VALID: 'O JWT ainda não é válido.',
    ERR_JWT_LOGIN_TOKEN_EXPIRED: 'O JWT expirou.',
    ERR_JWT_LOGIN_TOKEN_DECODE: 'Os segmentos do JWT não são JSON válido codificado em base64url.',
    ERR_JWT_LOGIN_AUTHORIZATION_MALFORMED: 'O cabeçalho Authorization não contém um token Bearer.',
    ERR_JWT_LOGIN_INTERIM_TOKEN_MISSING: 'O JWT intermediário não foi informado.',
    ERR_JWT_LOGIN_TOKEN_USER_GONE: 'O usuário deste JWT não existe mais.',
    ERR_JWT_LOGIN_REFRESH_USER_GONE: 'O usuário deste token de atualização não existe mais.',
    ERR_JWT_LOGIN_AUTH_CODE_INVALID: 'O auth code é inválido ou expirou.',
    ERR_JWT_LOGIN_AUTH_CODE_MISSING: 'O auth code é obrigatório.',
    ERR_JWT_LOGIN_AUTH_DISABLED: 'A autenticação não está habilitada.',
    ERR_JWT_LOGIN_LOGIN_MISSING: 'Informe exatamente um dos campos email, username ou login.',
    ERR_JWT_LOGIN_PASSWORD_MISSING: 'Informe exatamente um dos campos password ou password_hash.',
    ERR_JWT_LOGIN_WRONG_CREDENTIALS: 'As credenciais estão incorretas.',
    ERR_JWT_LOGIN_PASSWORD_HASH_DISABLED: 'O login com password_hash não está habilitado.',
    ERR_JWT_LOGIN_REFRESH_TOKEN_MISSING: 'O campo refresh_token não foi informado.',
    ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID: 'O token de atualização é inválido, expirou ou já foi usado.',
    ERR_JWT_LOGIN_USER_CREATE_FAILED: 'Não foi possível criar o usuário.',
    ERR_JWT_LOGIN_JWT_MISSING: 'O JWT não foi informado.',
    ERR_JWT_LOGIN_BEARER_MISSING: 'O JWT não foi informado.',
    ERR_JWT_LOGIN_TOKEN_REVOKED: 'O JWT foi revogado.',
    ERR_JWT_LOGIN_REFRESH_DISABLED: 'Os tokens de atualização não estão habilitados.',
    ERR_JWT_LOGIN_VALIDATE_DISABLED: 'A rota validate não está habilitada.',
    ERR_JWT_LOGIN_REVOKE_DISABLED: 'A rota revoke não está habilitada.',
    ERR_JWT_LOGIN_TWO_FACTOR_UNAVAILABLE: 'A autenticação de dois fatores não está disponível.',
    ERR_JWT_LOGIN_INTERIM_TOKEN_INVALID: 'O JWT intermediário é inválido, expirou ou não é um token intermediário.',
    ERR_JWT_LOGIN_CHALLENGE_CLOSED: 'O desafio de autenticação de dois fatores não existe, expirou, já foi usado ou foi encerrado.',
    ERR_JWT_LOGIN_TWO_FACTOR_LOCKED: 'Muitas tentativas malsucedidas de autenticação de dois fatores.',
    ERR_JWT_LOGIN_TWO_FACTOR_CODE_MISSING: 'O código de autenticação de dois fatores não foi informado.',
    ERR_JWT_LOGIN_TWO_FACTOR_CODE_WRONG: 'O código de autenticação de dois fatores está incorreto.',
    ERR_JWT_LOGIN_INTERIM_TOKEN_USED: 'Um token intermediário não pode ser usado aqui; conclua primeiro a etapa de autenticação de dois fatores.',
    ERR_JWT_LOGIN_TWO_FACTOR_DISABLED: 'O login com dois fatores está desativado, mas é obrigatório para esta conta.',
    ERR_JWT_LOGIN_RESET_DISABLED: 'A redefinição de senha não está habilitada.',
    ERR_JWT_LOGIN_RESET_EMAIL_MISSING: 'O campo email não foi informado.',
    ERR_JWT_LOGIN_RESET_CODE_MISSING: 'O campo code não foi informado.',
    ERR_JWT_LOGIN_RESET_PASSWORD_MISSING: 'O campo new_password não foi informado.',
    ERR_JWT_LOGIN_RESET_CODE_INVALID: 'O código de redefinição é inválido ou expirou.',
    ERR_JWT_LOGIN_RESET_EMAIL_MALFORMED: 'O campo email não contém um endereço de e-mail válido.',
    ERR_JWT_LOGIN_RESET_REQUEST_EMAIL_INVALID: 'O campo email não foi informado ou não contém um endereço de e-mail válido.',
    ERR_JWT_LOGIN_PASSWORD_POLICY: 'A nova senha não atende à política de senhas.',
    ERR_JWT_LOGIN_RESET_INCOMPLETE: 'A senha não foi alterada, mas as sessões abertas podem ter sido encerradas; tente usar o código novamente.',
    ERR_JWT_LOGIN_REGISTER_DISABLED: 'O cadastro não é permitido.',
    ERR_JWT_LOGIN_REGISTER_FIELDS_MISSING: 'Informe um e-mail e uma senha.',
    ERR_JWT_LOGIN_REGISTER_EMAIL_INVALID: 'O e-mail é inválido, ou o campo email ou user_login tem mais de 60 caracteres.',
    ERR_JWT_LOGIN_REGISTER_DOMAIN: 'Usuários deste domínio de e-mail não podem se cadastrar.',
    ERR_JWT_LOGIN_REGISTER_EMAIL_NOT_ASCII: 'O e-mail deve ser escrito em ASCII, com um domínio internacionalizado na sua forma xn--; letras que apenas se parecem com as ASCII são recusadas.',
    ERR_JWT_LOGIN_USER_EXISTS: 'O usuário já existe.',
    ERR_JWT_LOGIN_DELETE_DISABLED: 'A exclusão de usuários não está habilitada.',
    ERR_JWT_LOGIN_DELETE_INCOMPLETE: 'O usuário não foi excluído, mas as sessões dele foram encerradas; faça login e tente novamente.',
    ERR_JWT_LOGIN_REGISTER_SIGN_IN_FAILED: 'O usuário foi criado, mas não foi possível conectá-lo; faça login com a senha dele.',
    ERR_JWT_LOGIN_PROVIDER_UNKNOWN: 'O provedor é desconhecido.',
    ERR_JWT_LOGIN_PROVIDER_DISABLED: 'O provedor não está habilitado.',
    ERR_JWT_LOGIN_PROVIDER_CODE_MISSING: 'Informe o campo code ou id_token.',
    ERR_JWT_LOGIN_PROVIDER_CODE_INVALID: 'O provedor rejeitou o código.',
    ERR_JWT_LOGIN_ID_TOKEN_INVALID: 'O token de ID é inválido.',
    ERR_JWT_LOGIN_PROVIDER_USER_NOT_FOUND: 'Nenhum usuário corresponde e o cadastro está desativado.',
    ERR_JWT_LOGIN_EMAIL_UNVERIFIED: 'O provedor não verificou o e-mail.',
    ERR_JWT_LOGIN_RATE_LIMITED: 'Muitas requisições; tente novamente mais tarde.',
    ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE: 'Uma dependência está indisponível; nada foi alterado.',
    ERR_JWT_LOGIN_PROVIDER_TIMEOUT: 'O provedor de identidade não respondeu a tempo.',
    ERR_JWT_LOGIN_PROVIDER_ERROR: 'O provedor de identidade retornou um erro.',
    ERR_JWT_LOGIN_BAD_REQUEST: 'A requisição está malformada.',
    ERR_JWT_LOGIN_NOT_FOUND: 'Esta rota não existe.',
    ERR_JWT_LOGIN_ORIGIN_NOT_ALLOWED: 'A origem (Origin) desta requisição não é permitida.',
    ERR_JWT_LOGIN_CSRF_TOKEN_INVALID: 'O token CSRF não foi informado ou está incorreto.',
    ERR_JWT_LOGIN_ID_TOKEN_REPLAYED: 'O token de ID já foi usado.',
    ERR_JWT_LOGIN_PROVIDER_EMAIL_MISMATCH: 'A conta encontrada não tem o e-mail verificado pelo provedor.',
    ERR_JWT_LOGIN_SESSIONS_DISABLED: 'O gerenciamento de sessões não está habilitado.',
    ERR_JWT_LOGIN_SESSION_NOT_FOUND: 'Esta sessão não existe.',
    ERR_JWT_LOGIN_DEVICE_NOT_FOUND: 'Este dispositivo confiável não existe.',
    ERR_JWT_LOGIN_PASSKEYS_DISABLED: 'As chaves de acesso não estão habilitadas.',
    ERR_JWT_LOGIN_PASSKEY_REFUSED: 'Não foi possível verificar a chave de acesso; solicite novas opções e tente novamente.',
    ERR_JWT_LOGIN_PASSKEY_ORIGIN: 'A operação com a chave de acesso ocorreu em uma origem que não está em passkeys.origins.',
    ERR_JWT_LOGIN_PASSKEY_RP_ID: 'A chave de acesso está vinculada a um ID de terceira parte confiável diferente de passkeys.rpId.',
    ERR_JWT_LOGIN_PASSKEY_NOT_FOUND: 'Esta chave de acesso não existe.',
    ERR_JWT_LOGIN_REAUTHENTICATION_REQUIRED: 'É necessário um login mais recente: confirme sua identidade com uma senha, um código ou uma chave de acesso.',
    ERR_JWT_LOGIN_PASSKEY_REGISTRATION_REFUSED: 'Não foi possível verificar a nova chave de acesso; solicite novas opções e tente novamente.',
    ERR_JWT_LOGIN_PASSKEY_EXISTS: 'Esta chave de acesso já está cadastrada.',
    ERR_JWT_LOGIN_PASSKEY_LIMIT: 'A conta já atingiu o número máximo de chaves de acesso; exclua uma primeiro.',
    ERR_JWT_LOGIN_PASSKEY_AUTHENTICATOR_NOT_ALLOWED: 'Este tipo de autenticador não é permitido aqui (passkeys.aaguids).',
    ERR_JWT_LOGIN_STEP_UP_FACTOR_MISSING: 'A confirmação de identidade exige uma senha, um código, uma chave de acesso ou, então, uma senha e um código.',
    ERR_JWT_LOGIN_BUSY: 'Há muitos pedidos aguardando a verificação ou o hash de uma senha; tente novamente mais tarde.',
    ERR_JWT_LOGIN_EMAIL_NOT_VERIFIED: 'O e-mail desta conta ainda não foi verificado: digite o código enviado para ele ou solicite um novo.',
    ERR_JWT_LOGIN_PROVIDER_ACCOUNT_UNVERIFIED: 'Já existe uma conta com este e-mail, mas o endereço dela nunca foi verificado: redefina a senha dessa conta por e-mail, o que comprova o endereço, e depois faça login.',
    ERR_JWT_LOGIN_ACCOUNT_DISABLED: 'Este recurso da conta não está habilitado.',
    ERR_JWT_LOGIN_ACCOUNT_CODE_INVALID: 'O código é inválido ou expirou.',
    ERR_JWT_LOGIN_EMAIL_TAKEN: 'Este e-mail não pode ser usado nesta conta.',
    ERR_JWT_LOGIN_EMAIL_INVALID: 'O novo e-mail é inválido, tem mais de 100 caracteres, não está escrito em ASCII ou já é o da própria conta.',
    ERR_JWT_LOGIN_EMAIL_VERIFIED_ALREADY: 'O e-mail desta conta já foi verificado.',
    ERR_JWT_LOGIN_CURRENT_PASSWORD_WRONG: 'A senha atual está incorreta.',
    ERR_JWT_LOGIN_TOTP_CODE_WRONG: 'O código não corresponde ao novo segredo; verifique o relógio do aplicativo e tente o próximo código dele.',
    ERR_JWT_LOGIN_TOTP_NOT_PENDING: 'Nenhum novo segredo TOTP está aguardando o primeiro código; comece a configuração novamente.',
    ERR_JWT_LOGIN_TWO_FACTOR_METHOD_UNAVAILABLE: 'Esta conta ainda não pode usar esse método; configure-o primeiro.',
    ERR_JWT_LOGIN_ACCOUNT_INCOMPLETE: 'A alteração não foi feita, mas as sessões podem ter sido encerradas; tente novamente.',
    ERR_JWT_LOGIN_REGISTER_LOGIN_INVALID: 'O campo user_login só pode conter as letras a-z e A-Z, os dígitos 0-9, espaços e _ . - @, sem espaço no início, no fim ou dois seguidos, e nenhum endereço de e-mail além do da própria conta.',
    ERR_JWT_LOGIN_EMAIL_SIGN_IN_DISABLED: 'O login por e-mail não está habilitado.',
    ERR_JWT_LOGIN_EMAIL_SIGN_IN_EMAIL_INVALID: 'O campo email não foi informado ou não contém um endereço de e-mail válido.',
    ERR_JWT_LOGIN_EMAIL_SIGN_IN_CODE_MISSING: 'Informe o código recebido por e-mail.',
    ERR_JWT_LOGIN_EMAIL_SIGN_IN_CODE_INVALID: 'O código está incorreto, já foi usado ou expirou; se continuar sendo recusado, solicite um novo.',
    ERR_JWT_LOGIN_IDENTITY_TAKEN: 'Esta conta do provedor está vinculada a outra conta.',
    ERR_JWT_LOGIN_IDENTITY_PROVIDER_LINKED: 'Já há uma conta deste provedor vinculada: desvincule-a primeiro.',
    ERR_JWT_LOGIN_IDENTITY_NOT_FOUND: 'Nenhuma conta deste provedor está vinculada.',
    ERR_JWT_LOGIN_IDENTITY_LAST: 'Esta é a única forma de entrar na conta: adicione primeiro uma senha, uma chave de acesso ou outro provedor.',
    ERR_JWT_LOGIN_USER_LOCKED: 'Esta conta está bloqueada; entre em contato com o suporte do site.',
    ERR_JWT_LOGIN_IMPERSONATION_REFUSED: 'Não enquanto age como outro usuário: isto exige o login do próprio usuário.',
    ERR_JWT_LOGIN_API_KEYS_DISABLED: 'As chaves de API não estão habilitadas.',
    ERR_JWT_LOGIN_API_KEY_INVALID: 'A chave de API está ausente, é desconhecida, expirou ou foi revogada.',
    ERR_JWT_LOGIN_API_KEY_SCOPE: 'A chave de API não tem um escopo de que esta rota precisa.',
    ERR_JWT_LOGIN_API_KEY_RATE_LIMITED: 'Solicitações demais com esta chave de API; tente de novo após o tempo indicado em Retry-After.',
    ERR_JWT_LOGIN_API_KEY_LIMIT: 'A conta já tem tantas chaves de API quanto pode; exclua uma primeiro.',
    ERR_JWT_LOGIN_API_KEY_NOT_FOUND: 'Essa chave de API não existe.',
    ERR_JWT_LOGIN_API_KEY_REQUEST_INVALID: 'Um escopo não é um dos declarados por este site, ou expires_in está fora do intervalo permitido.',
    ERR_JWT_LOGIN_API_KEY_NOT_ALLOWED: 'Uma chave de API não serve aqui: use um token de um login.'
  },
  fields: {
    body: 'campo `{{field}}` do corpo da requisição',
    querystring: 'parâmetro de consulta `{{field}}`',
    params: 'parâmetro de rota `{{field}}`',
    headers: 'cabeçalho `{{field}}`',
    other: 'campo `{{field}}`'
  },
  messages: {
    tokenRevoked: 'O token foi revogado.',
    sessionEnded: 'A sessão foi encerrada.',
    everySessionEnded: 'Todas as sessões foram encerradas.',
    everyOtherSessionEnded: 'Todas as outras sessões foram encerradas.',
    deviceForgotten: 'O dispositivo não é mais confiável.',
    loggedOut: 'Sessão encerrada.',
    passkeyRenamed: 'A chave de acesso foi renomeada.',
    passkeyDeleted: 'A chave de acesso foi excluída.',
    resetRequested: 'Se o e-mail pertencer a uma conta, um código de redefinição foi enviado para ele.',
    passwordChanged: 'A senha foi alterada.',
    userCreated: 'O usuário foi criado com sucesso.',
    userDeleted: 'O usuário foi excluído com sucesso.',
    verificationSent: 'Se o endereço pertencer a uma conta ainda não verificada, um código foi enviado para ele.',
    emailVerified: 'O e-mail foi verificado.',
    accountPasswordChanged: 'A senha foi alterada.',
    emailChangeSent: 'Um código foi enviado para o novo endereço; o e-mail será alterado assim que esse código for informado.',
    emailChanged: 'O e-mail foi alterado.',
    emailReverted: 'O e-mail anterior foi restaurado e todas as sessões foram encerradas.',
    twoFactorMethodChanged: 'O segundo fator foi alterado.',
    twoFactorDisabled: 'O segundo fator está desativado.',
    emailSignInSent: 'Se o endereço puder ser usado para fazer login, um código foi enviado para ele.',
    identityLinked: 'A conta do provedor está vinculada.',
    identityUnlinked: 'A conta do provedor está desvinculada.'
  },
  mails: {
    reset: {
      subject: 'Seu código para redefinir a senha em {{site_name}}',
      text: [
        'Olá, {{display_name}},',
        '',
        'Alguém pediu para redefinir a senha da conta {{email}} em {{site_name}}.',
        'Para redefini-la, digite este código: {{code}}',
        '',
        'Ele só pode ser usado uma vez e expira em {{expires_in_minutes}} minutos.',
        'Se você não fez esse pedido, ignore este e-mail; sua senha continua a mesma.'
      ].join('\n'),
      html: [
        '<p>Olá, {{display_name}},</p>',
        '<p>Alguém pediu para redefinir a senha da conta {{email}} em {{site_name}}.</p>',
        '<p>Para redefini-la, digite este código: <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong></p>',
        '<p>Ele só pode ser usado uma vez e expira em {{expires_in_minutes}} minutos.<br>',
        'Se você não fez esse pedido, ignore este e-mail; sua senha continua a mesma.</p>'
      ].join('\n')
    },
    emailCode: {
      subject: 'Seu código de acesso',
      text: 'Para entrar na conta, digite este código: {{code}}. Ele é válido por {{minutes}} minutos e só pode ser usado uma vez.\n\nSe não foi você quem tentou entrar na conta, altere sua senha.',
      html: '<p>Para entrar na conta, digite este código: <strong>{{code}}</strong>. Ele é válido por {{minutes}} minutos e só pode ser usado uma vez.</p><p>Se não foi você quem tentou entrar na conta, altere sua senha.</p>'
    },
    verifyEmail: {
      subject: 'Verifique seu e-mail em {{site_name}}',
      text: [
        'Olá, {{display_name}},',
        '',
        'Para confirmar que {{email}} é o seu endereço em {{site_name}}, digite este código: {{code}}. Ele só pode ser usado uma vez e expira em {{expires_in_minutes}} minutos.',
        '',
        'Se você não criou uma conta, ignore este e-mail.'
      ].join('\n'),
      html: [
        '<p>Olá, {{display_name}},</p>',
        '<p>Para confirmar que {{email}} é o seu endereço em {{site_name}}, digite este código: <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong>. Ele só pode ser usado uma vez e expira em {{expires_in_minutes}} minutos.</p>',
        '<p>Se você não criou uma conta, ignore este e-mail.</p>'
      ].join('')
    },
    emailChange: {
      subject: 'Confirme seu novo e-mail em {{site_name}}',
      text: [
        'Olá, {{display_name}},',
        '',
        'Para que {{email}} passe a ser o endereço da sua conta em {{site_name}}, digite este código: {{code}}. Ele só pode ser usado uma vez e expira em {{expires_in_minutes}} minutos.',
        '',
        'Se você não fez esse pedido, ignore este e-mail; nada será alterado.'
      ].join('\n'),
      html: [
        '<p>Olá, {{display_name}},</p>',
        '<p>Para que {{email}} passe a ser o endereço da sua conta em {{site_name}}, digite este código: <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong>. Ele só pode ser usado uma vez e expira em {{expires_in_minutes}} minutos.</p>',
        '<p>Se você não fez esse pedido, ignore este e-mail; nada será alterado.</p>'
      ].join('')
    },
    emailChanged: {
      subject: 'O e-mail da sua conta em {{site_name}} foi alterado',
      text: [
        'Olá, {{display_name}},',
        '',
        'O e-mail da sua conta em {{site_name}} não é mais {{email}}.',
        'Se não foi você quem fez a alteração, restaure o endereço anterior com este código: {{code}}',
        'Ele só pode ser usado uma vez em até {{expires_in_days}} dias e encerra todas as sessões da conta.'
      ].join('\n'),
      html: [
        '<p>Olá, {{display_name}},</p>',
        '<p>O e-mail da sua conta em {{site_name}} não é mais {{email}}.</p>',
        '<p>Se não foi você quem fez a alteração, restaure o endereço anterior com este código: <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong><br>Ele só pode ser usado uma vez em até {{expires_in_days}} dias e encerra todas as sessões da conta.</p>'
      ].join('')
    },
    passwordChanged: {
      subject: 'Sua senha em {{site_name}} foi alterada',
      text: [
        'Olá, {{display_name}},',
        '',
        'A senha da sua conta {{email}} em {{site_name}} acabou de ser alterada, e suas outras sessões foram encerradas.',
        'Se não foi você quem a alterou, redefina sua senha imediatamente.'
      ].join('\n'),
      html: [
        '<p>Olá, {{display_name}},</p>',
        '<p>A senha da sua conta {{email}} em {{site_name}} acabou de ser alterada, e suas outras sessões foram encerradas.</p>',
        '<p>Se não foi você quem a alterou, redefina sua senha imediatamente.</p>'
      ].join('')
    },
    emailSignIn: {
      subject: 'Seu código para entrar em {{site_name}}',
      text: [
        'Para entrar em {{site_name}} como {{email}}, digite este código: {{code}}. Ele só pode ser usado uma vez e expira em {{expires_in_minutes}} minutos.',
        '',
        'Se você não fez esse pedido, ignore este e-mail: ninguém consegue entrar sem o código.'
      ].join('\n'),
      html: [
        '<p>Para entrar em {{site_name}} como {{email}}, digite este código: <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong>. Ele só pode ser usado uma vez e expira em {{expires_in_minutes}} minutos.</p>',
        '<p>Se você não fez esse pedido, ignore este e-mail: ninguém consegue entrar sem o código.</p>'
      ].join('')
    },
    emailSignInLink: {
      subject: 'Seu código para entrar em {{site_name}}',
      text: [
        'Para entrar em {{site_name}} como {{email}}, digite este código: {{code}}',
        '',
        'Você também pode abrir este link no dispositivo em que fez o pedido:',
        '{{link}}',
        '',
        'O código só pode ser usado uma vez e expira em {{expires_in_minutes}} minutos. Se você não fez esse pedido, ignore este e-mail: ninguém consegue entrar sem o código.'
      ].join('\n'),
      html: [
        '<p>Para entrar em {{site_name}} como {{email}}, digite este código: <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong></p>',
        '<p>Você também pode <a href="{{link}}">entrar com este link</a> no dispositivo em que fez o pedido.</p>',
        '<p>O código só pode ser usado uma vez e expira em {{expires_in_minutes}} minutos. Se você não fez esse pedido, ignore este e-mail: ninguém consegue entrar sem o código.</p>'
      ].join('')
    }
  }
}
