import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { UiTemplateWrite } from '../../src/api/index.js';
import { IntegrationClient } from '../../src/client/index.js';
import type { TestHarness } from '../../src/testing/index.js';
import { type ConnectorOptions, MemoryKeyStore } from '../../src/worker/index.js';
import { openHarness } from './support/harness.js';
import { MemoryConnector, MemorySource } from './support/memory-source.js';
import { type RecordedRequest, recordingDispatcher } from './support/recording-dispatcher.js';

// Endpoint 17 reads the templates; endpoint 18 writes them, published as GET with a body.
const READ_PATH = '/v2/connector/ui-templates';
const WRITE_PATH = '/v2/connector/uitemplates';

let harness: TestHarness;
const recorders: ReturnType<typeof recordingDispatcher>[] = [];

beforeEach(async () => ({ harness } = await openHarness()));
afterEach(async () => {
  await harness.close(); // before the dispatchers its workers may send through
  await Promise.all(recorders.splice(0).map((recorder) => recorder.close()));
});

const poTemplate = { title: '{{data.title}}', fields: [{ label: 'Amount', value: '{{data.amount}}' }] };
const invoiceTemplate = { title: 'Invoice {{data.number}}' };
const declared: UiTemplateWrite[] = [
  { type: 'purchase-order', schemaId: 'po', template: poTemplate },
  { type: 'purchase-order', schemaId: 'invoice', template: invoiceTemplate },
];

/** Starts a connector declaring `templates`, then stops it; gives the requests it sent. */
async function runOnce(
  templates: readonly UiTemplateWrite[],
  overrides: Partial<ConnectorOptions> = {},
  authRequired = false,
): Promise<RecordedRequest[]> {
  class Templated extends MemoryConnector {
    override readonly uiTemplates = templates;
    override readonly authRequired = authRequired;
  }
  const recorder = recordingDispatcher();
  recorders.push(recorder);
  const worker = await harness.start(new Templated(new MemorySource()), {
    poller: { enabled: false },
    ...overrides,
    service: harness.serviceOptions({ dispatcher: recorder.dispatcher }),
  });
  await worker.stop();
  return recorder.requests;
}

const writes = (requests: RecordedRequest[]) => requests.filter((request) => request.path === WRITE_PATH);
const reads = (requests: RecordedRequest[]) => requests.filter((request) => request.path === READ_PATH);

async function heldTemplates() {
  const client = new IntegrationClient(harness.serviceOptions());
  try {
    return await client.getUiTemplates();
  } finally {
    await client.close();
  }
}

describe('UI templates', () => {
  it('are published on start', async () => {
    const requests = await runOnce(declared);
    expect(reads(requests)).toHaveLength(1);
    expect(writes(requests)).toHaveLength(1);
    expect(writes(requests)[0]?.method).toBe('GET');
    expect(reads(requests)[0]).toMatchObject({ method: 'GET', body: undefined });
    expect(JSON.parse(writes(requests)[0]?.body ?? '{}')).toEqual({ uiTemplates: declared });
    const held = await heldTemplates();
    expect(held.map(({ type, uiTemplate }) => ({ type, uiTemplate }))).toEqual([
      { type: 'purchase-order', uiTemplate: { invoice: invoiceTemplate } },
      { type: 'purchase-order', uiTemplate: { po: poTemplate } },
    ]);
  });

  it('are not written again when the service holds them as declared', async () => {
    await runOnce(declared);
    const second = await runOnce(declared);
    expect(reads(second)).toHaveLength(1);
    expect(writes(second)).toEqual([]);
    // Key order inside a template does not make it differ.
    const reordered = declared.map((template) => ({
      ...template,
      template: Object.fromEntries(Object.entries(template.template).reverse()),
    }));
    expect(writes(await runOnce(reordered))).toEqual([]);
  });

  it('writes only the template that changed', async () => {
    await runOnce(declared);
    const changedPo = { ...poTemplate, title: 'PO {{data.title}}' };
    const requests = await runOnce([
      { ...declared[0], template: changedPo } as UiTemplateWrite,
      declared[1] as UiTemplateWrite,
    ]);
    expect(writes(requests)).toHaveLength(1);
    expect(JSON.parse(writes(requests)[0]?.body ?? '{}')).toEqual({
      uiTemplates: [{ type: 'purchase-order', schemaId: 'po', template: changedPo }],
    });
    const held = await heldTemplates();
    expect(held.find((template) => 'po' in template.uiTemplate)?.uiTemplate).toEqual({ po: changedPo });
    expect(held).toHaveLength(2);
  });

  it('writes a template the service holds for another type', async () => {
    await runOnce(declared);
    const requests = await runOnce([{ type: 'invoice', schemaId: 'po', template: poTemplate }]);
    expect(writes(requests)).toHaveLength(1);
    expect(await heldTemplates()).toHaveLength(3);
  });

  it('sends neither a read nor a write when the connector declares none', async () => {
    const requests = await runOnce([]);
    expect(requests.map((request) => request.path)).toEqual(['/v2/connector/state', '/v2/connector']);
  });
});

describe('registration', () => {
  it('registers the task types and authRequired on every start, with the same outcome', async () => {
    const systemId = harness.tenant.system.id;
    const first = await runOnce(declared);
    expect(
      first.filter((request) => request.method === 'PATCH' && request.path === '/v2/connector'),
    ).toHaveLength(1);
    const registered = harness.backend.getConnector(systemId);
    expect(registered).toMatchObject({ taskTypes: ['approve', 'reject'], authRequired: false });

    const second = await runOnce(declared);
    expect(
      second.filter((request) => request.method === 'PATCH' && request.path === '/v2/connector'),
    ).toHaveLength(1);
    const again = harness.backend.getConnector(systemId);
    expect({ taskTypes: again.taskTypes, authRequired: again.authRequired, keys: again.keys }).toEqual({
      taskTypes: registered.taskTypes,
      authRequired: registered.authRequired,
      keys: registered.keys,
    });
  });

  it('keeps the same public key across restarts with the same key store', async () => {
    const systemId = harness.tenant.system.id;
    const keyStore = new MemoryKeyStore();
    await runOnce([], { keyStore }, true);
    const registered = harness.backend.getConnector(systemId);
    expect(registered).toMatchObject({ taskTypes: ['approve', 'reject'], authRequired: true });
    expect(registered.publicKey).toEqual(expect.any(String));

    await runOnce([], { keyStore }, true);
    const again = harness.backend.getConnector(systemId);
    expect(again).toMatchObject({
      taskTypes: ['approve', 'reject'],
      authRequired: true,
      publicKey: registered.publicKey,
      publicKeyExpiredAt: registered.publicKeyExpiredAt,
    });
    expect(again.keys).toEqual(registered.keys);
  });
});
