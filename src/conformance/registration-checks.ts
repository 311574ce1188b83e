/**
 * The registration checks: what the service learns of the connector when a worker starts.
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import { IntegrationClient } from '../client/index.js';
import { MemoryKeyStore } from '../worker/index.js';
import { type Check, requires } from './check.js';
import { ConformanceFailure } from './report.js';
import type { Stage } from './stage.js';

async function heldTemplates(stage: Stage) {
  const client = new IntegrationClient(stage.harness.serviceOptions());
  try {
    return await client.getUiTemplates();
  } finally {
    await client.close();
  }
}

const sorted = (names: readonly string[]) => [...names].sort();

export const registrationChecks: Check[] = [
  {
    name: 'registration.task-types',
    title: 'the registered task types are the declared ones, and so is authRequired',
    async run(environment) {
      const stage = await environment.stage();
      const staged = await stage.start();
      await stage.stop(staged);
      const held = environment.backend.getConnector(stage.harness.tenant.system.id);
      const declared = environment.declared;
      if (!isDeepStrictEqual(sorted(held.taskTypes), sorted(declared.taskTypes))) {
        throw new ConformanceFailure(
          `the task types ${JSON.stringify(sorted(declared.taskTypes))} registered`,
          `the service holds ${JSON.stringify(sorted(held.taskTypes))}`,
        );
      }
      if (held.authRequired !== declared.authRequired) {
        throw new ConformanceFailure(
          `authRequired ${declared.authRequired} registered`,
          `the service holds ${held.authRequired}`,
        );
      }
    },
  },
  {
    name: 'registration.ui-templates',
    title: 'the UI templates are published, and changed templates are republished',
    async run(environment) {
      const declared = environment.declared.uiTemplates;
      requires(declared.length > 0, 'the connector declares no UI templates');
      const stage = await environment.stage();
      await stage.stop(await stage.start());
      // The service answers a template per type, with one entry per schema.
      const missing = (
        held: { type: string; uiTemplate: Record<string, unknown> }[],
        wanted: typeof declared,
      ) =>
        wanted.filter(
          (template) =>
            !held.some(
              (one) =>
                one.type === template.type &&
                isDeepStrictEqual(
                  one.uiTemplate[template.schemaId],
                  JSON.parse(JSON.stringify(template.template)),
                ),
            ),
        );
      const first = missing(await heldTemplates(stage), declared);
      if (first.length > 0) {
        throw new ConformanceFailure(
          'every declared UI template published as declared',
          `the service does not hold ${first.map((template) => `(${template.type}, ${template.schemaId})`).join(', ')} as declared`,
        );
      }
      // A later version of the connector changes its first template: a new worker must republish it.
      const [head, ...rest] = declared;
      if (head === undefined) return;
      const changed = [
        { ...head, template: { ...head.template, conformanceRevision: environment.title('Revision') } },
        ...rest,
      ];
      const connector = stage.subject.connector(stage.driver);
      Object.defineProperty(connector, 'uiTemplates', { value: changed, configurable: true });
      const staged = await stage.start({ connector });
      await stage.stop(staged);
      const second = missing(await heldTemplates(stage), changed);
      if (second.length > 0) {
        throw new ConformanceFailure(
          'a changed UI template republished by the next worker',
          `the service still holds the old (${head.type}, ${head.schemaId})`,
        );
      }
    },
  },
  {
    name: 'registration.key-rotation',
    title: 'the key rotates before its expiry, and the new one is registered',
    async run(environment) {
      requires(environment.declared.authRequired, 'the connector has no authRequired: it has no key');
      const stage = await environment.stage();
      let now = Date.now();
      const keyStore = new MemoryKeyStore();
      const options = { keyStore, now: () => now };
      await stage.stop(await stage.start({ options }));
      const systemId = stage.harness.tenant.system.id;
      const before = environment.backend.getConnector(systemId);
      const expiry = Date.parse(before.publicKeyExpiredAt ?? '');
      if (before.publicKey === undefined || Number.isNaN(expiry)) {
        throw new ConformanceFailure('a public key registered', 'the service holds none');
      }
      // A day before the key expires: well inside the rotation margin (7 days by default).
      now = expiry - 86_400_000;
      await stage.stop(await stage.start({ options }));
      const after = environment.backend.getConnector(systemId);
      if (after.publicKey === before.publicKey || Date.parse(after.publicKeyExpiredAt ?? '') <= expiry) {
        throw new ConformanceFailure(
          'a new key, expiring later, registered a day before the old one expires',
          `the service holds a key expiring at ${after.publicKeyExpiredAt} (the old one: ${before.publicKeyExpiredAt})`,
        );
      }
    },
  },
];
