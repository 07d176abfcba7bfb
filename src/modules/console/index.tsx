import { Elysia } from 'elysia'
import type { ConsoleDeps } from './deps.ts'
import { accountsPages } from './pages/accounts.tsx'
import { deliveryPages } from './pages/deliveries.tsx'
import { eventPages } from './pages/events.tsx'
import { consoleFormPages } from './pages/forms.tsx'
import { keyPages } from './pages/keys.tsx'
import { overviewPages } from './pages/overview.tsx'
import { passwordPages } from './pages/password.tsx'
import { serverPages } from './pages/server.tsx'
import { setupPages } from './pages/setup.tsx'
import { signInPages } from './pages/sign-in.tsx'
import { usersPages } from './pages/users.tsx'

/**
 * The console at /console (CONTRACT 15): server-rendered pages over the same
 * services as the API. Each page group is a plugin of its own.
 */
export function consoleRoutes(deps: ConsoleDeps) {
  return new Elysia({ name: 'console' })
    .use(signInPages(deps))
    .use(setupPages(deps))
    .use(accountsPages(deps))
    .use(passwordPages(deps))
    .use(usersPages(deps))
    .use(serverPages(deps))
    .use(consoleFormPages(deps))
    .use(overviewPages(deps))
    .use(keyPages(deps))
    .use(deliveryPages(deps))
    .use(eventPages(deps))
}
