/** Host apps that declare their own routes around the plugin: see `buildHost` in app.ts. */
export { buildHost } from './app.js'
