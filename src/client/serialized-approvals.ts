/**
 * The sync's own way to send Update approvals (endpoint 11) with a body it has already validated and serialized, so
 * that each approval of a sync is checked and turned into JSON once rather than again by the client.
 *
 * Kept off the client's public type on purpose: each `IntegrationClient` registers its sender here when it is built,
 * and the worker's sync reaches it through the client's `internal.ts` (in no entry of the package). A symbol-keyed
 * method would have been visible in the client's declared type; a registry keyed by the client object is not.
 */

/** Sends `body`, the JSON text of `{"approvals":[...]}`, as Update approvals, with the client's retries. */
export type SerializedApprovalsSender = (body: string, options: { signal?: AbortSignal }) => Promise<void>;

const senders = new WeakMap<object, SerializedApprovalsSender>();

/** Called by a client as it is built. */
export function registerSerializedApprovalsSender(client: object, send: SerializedApprovalsSender): void {
  senders.set(client, send);
}

/** Sends a serialized batch through `client`, which must be a client built by the kit. */
export function sendSerializedApprovals(
  client: object,
  body: string,
  options: { signal?: AbortSignal },
): Promise<void> {
  const send = senders.get(client);
  // Only the kit calls this, with the worker's own client: a miss is a bug in the kit, not a user's mistake.
  if (send === undefined) throw new TypeError('not a client built by the kit');
  return send(body, options);
}
