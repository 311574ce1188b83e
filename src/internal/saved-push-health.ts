/**
 * Push health as the worker that syncs saves it in the kit's part of connector state (`kit.push.health`), for what
 * reads that state without reaching the worker: the reference backend's console shows it in the connector's health.
 * The worker writes it (`worker/sync/state.ts` keeps the layout of the kit's part); the backend reads it here. Fixed
 * in size: a state, two instants and two counts, never an approval id, an address or a secret. See `docs/push.md`,
 * "Push health".
 * @module
 */
import { z } from 'zod';

const Instant = z.iso.datetime({ offset: true });
const Count = z.number().int().nonnegative();

/** Push health as saved: what the console shows as "push degraded since …, 3 missed". */
export const SavedPushHealth = z.object({
  /** `healthy` or `degraded` as the worker judges it; `stopped` once its ingress closed on a clean stop. */
  state: z.enum(['healthy', 'degraded', 'stopped']),
  /** Since when it is in that state (ISO 8601): the ingress opened, push turned degraded or recovered, it stopped. */
  since: Instant,
  /** Changes the sync found that no event announced, since the worker started. */
  missed: Count,
  /** Of those, the ones since the last verified delivery. */
  missedSinceLastDelivery: Count,
  /** When the last verified delivery came, if one did since the worker started. */
  lastDeliveryAt: Instant.optional(),
});
export type SavedPushHealth = z.infer<typeof SavedPushHealth>;

/** The push health saved in a connector state object; `undefined` when there is none, or it does not read as one. */
export function savedPushHealthOf(state: unknown): SavedPushHealth | undefined {
  const health = field(field(field(state, 'kit'), 'push'), 'health');
  const parsed = SavedPushHealth.safeParse(health);
  return parsed.success ? parsed.data : undefined;
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}
