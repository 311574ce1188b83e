import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReferenceBackend, startReferenceBackend } from '../../src/backend/index.js';

// docs/reference-backend.md promises that a new user can drive every endpoint with its curl commands against the
// demo seed. This runs them, as written, with bash and curl.
const run = promisify(execFile);
const doc = readFileSync(new URL('../../docs/reference-backend.md', import.meta.url), 'utf8');
const section = doc.slice(doc.indexOf('## Every endpoint with curl'), doc.indexOf('## In tests'));
const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] as string);
const [setup = '', management = '', integration = '', errors = ''] = blocks;

let backend: ReferenceBackend;
let prelude: string;

beforeAll(async () => {
  backend = await startReferenceBackend({
    seed: 'examples/seed/demo.json',
    adminToken: 'demo-admin-token',
    port: 0,
  });
  prelude = [
    'set -euo pipefail',
    // Each call fails the script on an HTTP error, and the last task the admin API created is remembered.
    'curl() { local out; out=$(command curl --fail-with-body "$@") || { echo "$out" >&2; return 1; }; echo "$out";',
    '  if [[ "$*" == *"/admin/tasks"* ]]; then LAST_TASK=$(echo "$out" | sed -E \'s/.*"id":"([^"]+)".*/\\1/\'); fi; }',
    setup
      .split('\n')
      .filter((line) => !line.includes('connector.ts backend'))
      .join('\n')
      .replace(/^B=.*$/m, `B=${backend.url}`),
  ].join('\n');
});
afterAll(() => backend.close());

async function bash(script: string): Promise<string> {
  const { stdout } = await run('bash', ['-c', `${prelude}\n${script}`], { timeout: 30_000 });
  return stdout;
}

describe('the curl walkthrough of docs/reference-backend.md', () => {
  it('has its setup, v1, v2 and error blocks', () => {
    expect(blocks).toHaveLength(4);
    expect(setup).toContain('demo-connector-jira');
  });

  it('drives every v1 endpoint without an error', async () => {
    const output = await bash(management);
    expect(output).toContain('"firastName":"Alan"');
    expect(output).toContain('"status":"failure"'); // the duplicate user in Add users fails alone
    expect(output).toContain('{"deleted":1}');
  });

  it('drives every v2 endpoint without an error, the task id taken from the admin API', async () => {
    const script = integration.replace('TASK=<task id>', 'TASK=$LAST_TASK');
    const output = await bash(script);
    const jira = /^JIRA=(\S+)$/m.exec(setup)?.[1] ?? '';
    const [task] = backend.listTasks(jira);
    expect(task).toMatchObject({
      status: 'completed',
      result: { status: 'success', meta: { sourceRef: 'JIRA-42' } },
    });
    expect(output).toContain('"approval":{"id":"PO-1001"');
  });

  it('answers each documented error with the documented status and body', async () => {
    const commands = errors.split('\n').filter((line) => line.trim().startsWith('curl'));
    const expected = [...errors.matchAll(/# (\d{3}) (.*)$/gm)].map(([, status, body]) => ({ status, body }));
    expect(commands.length).toBe(expected.length);
    for (const [index, command] of commands.entries()) {
      const line = command.replace(/#.*$/, '').replace(/^curl /, 'command curl -w "\\n%{http_code}" ');
      const [body = '', status] = (await bash(line)).trimEnd().split('\n');
      expect(status, command).toBe(expected[index]?.status);
      // The documented body, up to an ellipsis that stands for the rest.
      const shown = (expected[index]?.body ?? '').split('…')[0] as string;
      expect(body.startsWith(shown) || body === shown, `${command}: ${body}`).toBe(true);
    }
  });
});
