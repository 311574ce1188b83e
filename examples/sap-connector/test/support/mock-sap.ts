import { readFileSync } from 'node:fs';
import { MockAgent } from 'undici';

/** Where the mocked SAP system lives. */
export const ORIGIN = 'https://sap.example.com';
export const SERVICE_PATH = '/sap/opu/odata/IWPGW/TASKPROCESSING;mo;v=2/';
export const SERVICE_URL = `${ORIGIN}${SERVICE_PATH}`;

/** A fixture's text, as SAP sends it. */
export function fixture(name: string): string {
  return readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');
}

/** A fixture parsed, to derive answers of the same shape from it. */
// biome-ignore lint/suspicious/noExplicitAny: fixtures are indexed freely; the client's parsing is what is tested.
export function fixtureJson(name: string): any {
  return JSON.parse(fixture(name));
}

/** The fixture's first task with another key (and title), for answers that need more tasks of the same shape. */
export function taskEntry(
  instanceId: string,
  changes: Record<string, unknown> = {},
): Record<string, unknown> {
  const [template] = fixtureJson('task-collection.json').d.results;
  const text = JSON.stringify(template).replaceAll('000001750567', instanceId);
  return { ...JSON.parse(text), TaskTitle: `Task ${instanceId}`, ...changes };
}

/** A collection answer: `{"d": {"results": [...]}}`. */
export function collection(results: readonly unknown[]): string {
  return JSON.stringify({ d: { results } });
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', dataserviceversion: '2.0' };

export interface Expectation {
  method?: 'GET' | 'POST';
  /** The resource below the service root: '' for the root, 'TaskCollection', 'DecisionOptions', 'Decision'. */
  resource: string;
  /** The query parameters exactly (decoded); a request with other ones does not match. */
  query?: Record<string, string>;
}

export interface Reply {
  status?: number;
  body?: string;
  headers?: Record<string, string | string[]>;
}

/** SAP behind an undici MockAgent: every request must match an expectation, and every one is recorded. */
export class MockSap {
  readonly agent = new MockAgent({ enableCallHistory: true });

  constructor() {
    this.agent.disableNetConnect();
  }

  /** Answers the next request that matches `expectation` with `reply` (JSON unless headers say otherwise). */
  on(expectation: Expectation, reply: Reply): void {
    const { resource, query } = expectation;
    this.agent
      .get(ORIGIN)
      .intercept({
        method: expectation.method ?? 'GET',
        path: (path) => {
          const url = new URL(path, ORIGIN);
          if (decodeURIComponent(url.pathname) !== `${SERVICE_PATH}${resource}`) return false;
          if (query === undefined) return true;
          const sent = Object.fromEntries(url.searchParams);
          return JSON.stringify(sortKeys(sent)) === JSON.stringify(sortKeys(query));
        },
      })
      .reply(reply.status ?? 200, reply.body ?? '', { headers: { ...JSON_HEADERS, ...reply.headers } });
  }

  /** The requests sent, in order: method, resource below the service root, decoded query and headers. */
  calls(): {
    method: string;
    resource: string;
    query: Record<string, string>;
    headers: Record<string, string>;
  }[] {
    return (this.agent.getCallHistory()?.calls() ?? []).map((call) => ({
      method: call.method,
      resource: decodeURIComponent(call.path).slice(SERVICE_PATH.length),
      query: call.searchParams,
      headers: Object.fromEntries(
        Object.entries(call.headers ?? {}).map(([name, value]) => [
          name.toLowerCase(),
          Array.isArray(value) ? value.join(', ') : value,
        ]),
      ),
    }));
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

function sortKeys(record: Record<string, string>): [string, string][] {
  return Object.entries(record).sort(([a], [b]) => a.localeCompare(b));
}

/** The `Authorization` header of basic authentication with these credentials. */
export function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}
