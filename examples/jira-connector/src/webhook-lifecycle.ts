/**
 * The connector's webhook in Jira: an admin webhook (`/rest/webhooks/1.0/webhook`), registered, checked and deleted
 * by the sync account, which must then be a Jira administrator. The kit decides when to make these calls (at start,
 * when the webhook is gone, when the push address changed), retries them, and says when they fail.
 *
 * Why an admin webhook: the connector signs in to Jira with an account's API token, and Jira takes dynamic webhooks
 * (`/rest/api/3/webhook`) only from Connect and OAuth 2.0 apps (an API token gets `403`); admin webhooks are what
 * an account may register, and the only ones Jira signs with a shared secret (`X-Hub-Signature`), which is how the
 * connector knows a delivery is Jira's. They do not expire, so there is nothing to refresh.
 *
 * The webhook is the connector's by its URL (the worker's push address): registering finds the one Jira holds for
 * that URL, sets its events, filter and secret again, and deletes any other for the same URL (two workers that
 * registered at once), so that any number of restarts and replicas end with one. Its filter is the connector's
 * JQL, which Jira applies to each issue after the change: a JQL that selects requests by a status their decision
 * moves them out of would miss the decisions, for the sync as for the webhook.
 * @module
 */
import type {
  PushContext,
  WebhookLifecycle,
  WebhookRegistration,
  WebhookTarget,
} from 'approval-connector-kit';
import { JiraError } from './errors.js';
import type { JiraClient } from './jira-client.js';
import { type AdminWebhook, type AdminWebhookInput, ISSUE_EVENTS } from './webhooks.js';

/** Registering the webhook needs the worker's push secret, which Jira signs the deliveries with. */
export class JiraWebhookSecretMissingError extends JiraError {
  constructor() {
    super(
      'jira_webhook_secret_missing',
      "The Jira webhook is registered with the worker's push secret (push.secret, PUSH_SECRET), which Jira signs " +
        'its deliveries with: set one',
    );
  }
}

/** The name of the connector's webhook in Jira's settings (System > WebHooks). */
export function webhookName(jql: string): string {
  return `Approval Service connector: ${jql}`.slice(0, 255);
}

/**
 * The calls that keep the connector's admin webhook in Jira, for the kit's push path (`push({ webhook })`).
 * Deliveries are signed with the worker's push secret; `unregisterOnStop` is `false`, since every replica of the
 * worker shares the one webhook.
 */
export function adminWebhookLifecycle(jira: JiraClient, jql: string): WebhookLifecycle {
  const input = (target: WebhookTarget, context: PushContext): AdminWebhookInput => {
    const secret = context.secret?.reveal();
    if (secret === undefined || secret === '') throw new JiraWebhookSecretMissingError();
    return { name: webhookName(jql), url: target.url, events: ISSUE_EVENTS, jql, secret };
  };
  return {
    unregisterOnStop: false,
    register: async (target, context) => {
      const wanted = input(target, context);
      const { signal } = context;
      const forTarget = async () =>
        (await jira.listAdminWebhooks({ signal })).filter(({ url }) => url === target.url);
      const ours = await forTarget();
      if (ours.length === 0) {
        const created = await jira.registerAdminWebhook(wanted, { signal });
        // Another worker may have registered one for the same address meanwhile: every one keeps the first.
        const now = await forTarget();
        if (now.length <= 1) return registrationOf(created);
        const kept = firstOf(now);
        await deleteOthers(jira, now, kept, signal);
        return registrationOf(kept);
      }
      const kept = firstOf(ours);
      await deleteOthers(jira, ours, kept, signal);
      // Its events, filter and secret as this worker has them: an administrator may have changed them.
      return registrationOf(await jira.updateAdminWebhook(kept.id, wanted, { signal }));
    },
    exists: async (registration, { signal }) => {
      const webhook = await jira.getAdminWebhook(registration.id, { signal });
      return webhook?.enabled === true && webhook.url === registration.data?.url;
    },
    unregister: async (registration, { signal }) => {
      await jira.deleteAdminWebhook(registration.id, { signal });
    },
  };
}

function registrationOf(webhook: AdminWebhook): WebhookRegistration {
  return { id: webhook.id, data: { url: webhook.url, name: webhook.name } };
}

/** The webhook with the lowest id: the one every worker keeps. */
function firstOf(webhooks: readonly AdminWebhook[]): AdminWebhook {
  const [first] = [...webhooks].sort((a, b) => Number(a.id) - Number(b.id));
  if (first === undefined) throw new JiraError('jira_webhook_gone', 'Jira lists no webhook for this address');
  return first;
}

async function deleteOthers(
  jira: JiraClient,
  webhooks: readonly AdminWebhook[],
  kept: AdminWebhook,
  signal: AbortSignal,
): Promise<void> {
  for (const webhook of webhooks) {
    if (webhook.id !== kept.id) await jira.deleteAdminWebhook(webhook.id, { signal });
  }
}
