import { describe, expectTypeOf, it } from 'vitest';
import {
  incremental,
  type PushContext,
  type PushDelivery,
  push,
  type SourceApproval,
  type SourceContext,
  snapshot,
  type WebhookRegistration,
} from '../../src/connector/index.js';

// A push path is declared with a verifier, and only beside lookup(): the kit checks a delivery before anything
// parses it, and reads what an event names through lookup(). Both are compile errors when missing.

const changes = async function* (): AsyncIterable<SourceApproval> {};
const lookup = async function* (_ids: readonly string[]): AsyncIterable<SourceApproval> {};
const approvalIds = () => ['PO-1'];

describe('a push path', () => {
  it('does not compile without a verifier', () => {
    // @ts-expect-error `verify` is required
    push({ approvalIds });
    // @ts-expect-error also when it is given to the source without push()
    incremental({ changes, lookup, push: { approvalIds } });
    push({ verify: () => true, approvalIds });
  });

  it('does not compile without lookup() beside it, in either kind of source', () => {
    const path = push({ verify: () => true, approvalIds });
    // @ts-expect-error the kit reads what an event names through lookup()
    incremental({ changes, push: path });
    // @ts-expect-error
    snapshot({ snapshot: changes, push: path });
    incremental({ changes, lookup, push: path });
    snapshot({ snapshot: changes, lookup, push: path });
  });

  it('gives its methods the raw delivery and a context with the webhook secret', () => {
    push<{ seen: number }>({
      verify: (delivery, context) => {
        expectTypeOf(delivery).toEqualTypeOf<PushDelivery>();
        expectTypeOf(delivery.body).toEqualTypeOf<Buffer>();
        expectTypeOf(delivery.headers['x-hub-signature']).toEqualTypeOf<string | undefined>();
        expectTypeOf(context).toEqualTypeOf<PushContext<{ seen: number }>>();
        expectTypeOf(context).toExtend<SourceContext<{ seen: number }>>();
        return Promise.resolve(context.secret !== undefined);
      },
      approvalIds: async (_delivery, context) => {
        expectTypeOf(context.state.read()).toEqualTypeOf<{ seen: number } | undefined>();
        return [];
      },
      deliveryId: (delivery) => delivery.headers['x-atlassian-webhook-identifier'],
    });
  });

  it('declares the webhook calls, of which register() alone is required', () => {
    const registration: WebhookRegistration = { id: '17', expiresAt: new Date() };
    push({
      verify: () => true,
      approvalIds,
      webhook: {
        register: async (target) => {
          expectTypeOf(target.url).toEqualTypeOf<string>();
          return registration;
        },
      },
    });
    push({
      verify: () => true,
      approvalIds,
      // @ts-expect-error a webhook without register() cannot be kept
      webhook: { refresh: async () => registration },
    });
  });
});
