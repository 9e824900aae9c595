/** `npm start`: runs the demo host until SIGINT or SIGTERM. */
import { main } from './demo.js'

const app = await main({ PORT: '3000', ...process.env })
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
}
