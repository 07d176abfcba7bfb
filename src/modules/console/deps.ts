import type { Config } from '../../config.ts'
import type { StoreKind } from '../../db/driver.ts'
import type { BodyReader } from '../../lib/request-body.ts'
import type { Clock } from '../../lib/time.ts'
import type { Reads } from '../../stores.ts'
import type { AuthService } from '../auth/service.ts'
import type { EventService } from '../events/service.ts'
import type { FormService } from '../forms/service.ts'
import type { ResponseService } from '../responses/service.ts'
import type { SubmissionService } from '../submissions/service.ts'
import type { WebhookService } from '../webhooks/service.ts'
import type { ConsoleService } from './service.ts'
import type { ConsoleSession } from './session.ts'

/** What every console page plugin is given (`(deps: ConsoleDeps) => Elysia`). */
export interface ConsoleDeps {
  /** The services the API uses: every console action goes through them. */
  services: {
    auth: AuthService
    forms: FormService
    responses: ResponseService
    submissions: SubmissionService
    webhooks: WebhookService
    events: EventService
  }
  /** Console users, set-up links, sessions and sign-in. */
  users: ConsoleService
  /** Read-only summaries the API has no call for. */
  store: Reads
  /** What runs underneath, for the server page. */
  database: { kind: StoreKind; location: string; schemaVersion: number }
  config: Config
  clock: Clock
  baseUrl: () => string
  bodies: BodyReader
  /** `.use(deps.session)` gives a page plugin the macros `signedIn`, `account` and `operator`. */
  session: ConsoleSession
}
