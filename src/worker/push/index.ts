/**
 * The push path's runtime: the ingress a source delivers its events to (its own port; `ingress.ts`), what it
 * answers and the lookups it asks for (`push-runtime.ts`), the delivery ids it dedupes by (`delivery-ids.ts`), push
 * health (`health.ts`), the webhook's lifecycle (`webhook.ts`), and their options (`options.ts`). See
 * `docs/push.md`.
 * @module
 */

export type { PushHealthReport } from './health.js';
export {
  PUSH_SECRET_OPTIONS,
  type PushOptions,
  pushOptionsSchema,
  type ResolvedPushOptions,
  type WebhookOptions,
} from './options.js';
export { type PushReport, PushRuntime, type PushRuntimeParts } from './push-runtime.js';
export type { WebhookReport } from './webhook.js';
