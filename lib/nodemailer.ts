/** `fastify-jwt-login/nodemailer`: the mailer port on nodemailer (needs the optional peer `nodemailer`). */
export { NodemailerMailer, SMTP_TIMEOUTS, type NodemailerMailerOptions } from './mail/nodemailer.js'
