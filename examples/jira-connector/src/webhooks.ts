/**
 * Jira's two webhook APIs, as far as the client uses them: their bodies, what their answers hold, and the checks of
 * what a caller gives them. The calls themselves are {@link JiraClient}'s.
 *
 * - **Admin webhooks**, `/rest/webhooks/1.0/webhook`: what an administrator creates in Jira's settings (System >
 *   WebHooks) or through this API, with Jira administrator rights. They do not expire. Created with a `secret`, each
 *   delivery is signed (`X-Hub-Signature: sha256=<HMAC-SHA256 of the body, in hex>`). The filter is any JQL.
 *   Atlassian describes them on its webhooks page (https://developer.atlassian.com/cloud/jira/platform/webhooks/,
 *   "Registering a webhook via the Jira REST API" and "Secure admin webhooks"); there is no OpenAPI description.
 * - **Dynamic webhooks**, `/rest/api/3/webhook`: only Connect and OAuth 2.0 apps may register them (an account
 *   signing in with an API token gets `403`); they expire 30 days after they were registered or last refreshed
 *   (`PUT /rest/api/3/webhook/refresh`); their filter is a subset of JQL, and a filter Jira refuses comes back as
 *   an `errors` entry inside a `200`. The platform API's OpenAPI describes them.
 *
 * Jira applies a webhook's JQL to the issue as it is after the change: a filter on the status an approval waits in
 * misses every decision, which moves the request out of that status.
 * @module
 */
import { z } from 'zod';
import { type Checked, JiraArgumentError, orThrow } from './errors.js';
import { checkJql } from './jql.js';

/** The issue events the connector is told of. */
export const ISSUE_EVENTS = ['jira:issue_created', 'jira:issue_updated', 'jira:issue_deleted'] as const;
export type IssueEvent = (typeof ISSUE_EVENTS)[number];

/** The path of the admin webhooks. */
export const ADMIN_WEBHOOKS_PATH = '/rest/webhooks/1.0/webhook';
/** The path of the dynamic webhooks. */
export const DYNAMIC_WEBHOOKS_PATH = '/rest/api/3/webhook';

/** What an admin webhook is made of, as {@link JiraClient.registerAdminWebhook} takes it. */
export interface AdminWebhookInput {
  /** Its name in Jira's settings; the connector finds its own webhook by it. */
  name: string;
  /** Where Jira delivers: an http(s) URL (Jira Cloud requires https with a certificate of a trusted authority). */
  url: string;
  /** The events to deliver, such as `jira:issue_updated`. */
  events: readonly string[];
  /** The issues whose events are delivered: JQL, applied to each issue as it is after the change. */
  jql: string;
  /** Jira signs each delivery with it (`X-Hub-Signature`). Jira never shows it again. */
  secret?: string;
}

/** An admin webhook as Jira lists it (never with its secret). */
export interface AdminWebhook {
  /** Its id: the last segment of its `self`. */
  id: string;
  name: string;
  url: string;
  events: string[];
  /** Its JQL filter; `undefined` when it has none (every issue). */
  jql: string | undefined;
  enabled: boolean;
}

/** An admin webhook as Jira answers it: `self` ends with its id. */
export const JiraAdminWebhook = z.looseObject({
  self: z.string(),
  name: z.string().default(''),
  url: z.string(),
  events: z.array(z.string()).default([]),
  filters: z.looseObject({ 'issue-related-events-section': z.string().nullish() }).nullish(),
  excludeBody: z.boolean().optional(),
  enabled: z.boolean().default(true),
});

/** `GET /rest/webhooks/1.0/webhook`: every admin webhook of the site. */
export const JiraAdminWebhooks = z.array(JiraAdminWebhook);

/** The webhook's id, from its `self`; `undefined` when `self` does not end with one. */
export function adminWebhookOf(webhook: z.infer<typeof JiraAdminWebhook>): AdminWebhook | undefined {
  const id = /\/webhook\/(\d+)\/?$/.exec(webhook.self)?.[1];
  if (id === undefined) return undefined;
  const jql = webhook.filters?.['issue-related-events-section'] ?? undefined;
  return {
    id,
    name: webhook.name,
    url: webhook.url,
    events: webhook.events,
    jql: jql === '' ? undefined : jql,
    enabled: webhook.enabled,
  };
}

/** The body of `POST` and `PUT /rest/webhooks/1.0/webhook[/{id}]`, its input checked first. */
export function adminWebhookBody(input: AdminWebhookInput): Record<string, unknown> {
  const { name, url, events, jql, secret } = input ?? {};
  if (typeof name !== 'string' || name.trim() === '') {
    throw new JiraArgumentError('name must be a non-empty name for the webhook');
  }
  const target = orThrow('url', checkWebhookUrl(url));
  const kinds = orThrow('events', checkEvents(events));
  const filter = orThrow('jql', checkJql(jql));
  if (secret !== undefined && (typeof secret !== 'string' || secret === '')) {
    throw new JiraArgumentError('secret must be a non-empty string when given');
  }
  return {
    name,
    url: target,
    events: kinds,
    filters: { 'issue-related-events-section': filter },
    excludeBody: false,
    ...(secret === undefined ? {} : { secret }),
  };
}

/** One dynamic webhook to register: its events and its JQL filter (a subset of JQL; see the module). */
export interface DynamicWebhookInput {
  events: readonly string[];
  jqlFilter: string;
  /** With `jira:issue_updated`: only changes of these fields are delivered. @default every field */
  fieldIdsFilter?: readonly string[];
}

/** What Jira made of one dynamic webhook of a registration, in the order they were given. */
export type DynamicWebhookResult = { ok: true; id: number } | { ok: false; errors: string[] };

/** A dynamic webhook as Jira lists it. */
export interface DynamicWebhook {
  id: number;
  events: string[];
  jqlFilter: string;
  url: string | undefined;
  /** After this, Jira no longer delivers it, unless it is refreshed. */
  expiresAt: Date | undefined;
}

/**
 * Jira's `expirationDate`: the OpenAPI description types it as an integer (epoch milliseconds), while its examples
 * write a date-time (`2019-06-01T12:42:30.000+0000`); both are read.
 */
const ExpirationDate = z.union([z.number().int(), z.string()]).transform((value, context) => {
  const ms = typeof value === 'number' ? value : Date.parse(value.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  if (Number.isNaN(ms)) {
    context.addIssue({ code: 'custom', message: 'is not a date', input: value });
    return z.NEVER;
  }
  return new Date(ms);
});

/** `GET /rest/api/3/webhook` (PageBeanWebhook). */
export const JiraDynamicWebhookPage = z.looseObject({
  values: z
    .array(
      z.looseObject({
        id: z.number().int(),
        events: z.array(z.string()).default([]),
        jqlFilter: z.string().default(''),
        url: z.string().optional(),
        expirationDate: ExpirationDate.optional(),
      }),
    )
    .default([]),
  startAt: z.number().int().optional(),
  maxResults: z.number().int().optional(),
  isLast: z.boolean().optional(),
});

/** `POST /rest/api/3/webhook` (ContainerForRegisteredWebhooks). */
export const JiraRegisteredWebhooks = z.looseObject({
  webhookRegistrationResult: z
    .array(
      z.looseObject({
        createdWebhookId: z.number().int().optional(),
        errors: z.array(z.string()).optional(),
      }),
    )
    .default([]),
});

/** `PUT /rest/api/3/webhook/refresh` (WebhooksExpirationDate). */
export const JiraWebhooksExpiration = z.looseObject({ expirationDate: ExpirationDate });

/** The body of `POST /rest/api/3/webhook`, its input checked first. */
export function dynamicWebhooksBody(
  url: string,
  webhooks: readonly DynamicWebhookInput[],
): Record<string, unknown> {
  const target = orThrow('url', checkWebhookUrl(url));
  if (!Array.isArray(webhooks) || webhooks.length === 0) {
    throw new JiraArgumentError('webhooks must list at least one webhook to register');
  }
  return {
    url: target,
    webhooks: webhooks.map(({ events, jqlFilter, fieldIdsFilter }, index) => {
      const jql = checkJql(jqlFilter);
      if (!jql.ok) throw new JiraArgumentError(`webhooks[${index}].jqlFilter ${jql.problem}`);
      const kinds = checkEvents(events);
      if (!kinds.ok) throw new JiraArgumentError(`webhooks[${index}].events ${kinds.problem}`);
      return {
        events: kinds.value,
        jqlFilter: jql.value,
        ...(fieldIdsFilter === undefined ? {} : { fieldIdsFilter: [...fieldIdsFilter] }),
      };
    }),
  };
}

/** The body of the calls that take webhook ids: `{"webhookIds": [...]}`. */
export function webhookIdsBody(ids: readonly number[]): { webhookIds: number[] } {
  if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => Number.isSafeInteger(id) && id > 0)) {
    throw new JiraArgumentError(`webhookIds must be one or more webhook ids, got ${JSON.stringify(ids)}`);
  }
  return { webhookIds: [...ids] };
}

/** Checks an admin webhook's id: Jira's are numbers. */
export function checkedAdminWebhookId(id: unknown): string {
  if (typeof id !== 'string' || !/^\d+$/.test(id)) {
    throw new JiraArgumentError(`webhookId must be a numeric webhook id, got ${JSON.stringify(id)}`);
  }
  return id;
}

/** Checks where a webhook delivers: an http(s) URL without credentials. */
export function checkWebhookUrl(url: unknown): Checked<string> {
  let parsed: URL | undefined;
  try {
    parsed = typeof url === 'string' ? new URL(url) : undefined;
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || !['http:', 'https:'].includes(parsed.protocol) || parsed.username !== '') {
    return {
      ok: false,
      problem: `must be an http(s) URL without credentials, such as https://connector.example.com/push, got ${
        typeof url === 'string' ? JSON.stringify(url.replace(/\/\/[^@/]*@/, '//[redacted]@')) : typeof url
      }`,
    };
  }
  return { ok: true, value: parsed.href };
}

function checkEvents(events: unknown): Checked<string[]> {
  if (
    !Array.isArray(events) ||
    events.length === 0 ||
    !events.every((event) => typeof event === 'string' && event !== '')
  ) {
    return { ok: false, problem: 'must list one or more events, such as "jira:issue_updated"' };
  }
  return { ok: true, value: [...new Set(events as string[])] };
}
