import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as apps from 'kubernetes-models/apps/v1';
import * as networking from 'kubernetes-models/networking.k8s.io/v1';
import * as policy from 'kubernetes-models/policy/v1';
import * as core from 'kubernetes-models/v1';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { resolveConnectorOptions, SHUTDOWN_MARGIN_MS } from '../../src/worker/core/connector-options.js';
import {
  loadWorkerConfig,
  WORKER_VARIABLES,
  type WorkerConfig,
} from '../../src/worker/process/worker-config.js';
import type { ResolvedPushOptions } from '../../src/worker/push/options.js';

const folder = fileURLToPath(new URL('../../deploy/kubernetes/', import.meta.url));

// Kubernetes' own schemas of every kind the manifests may hold; a kind missing here fails the test, so that no
// manifest goes unchecked.
const MODELS: Record<string, Record<string, { new (data: never): { validate(): void } }>> = {
  v1: { ConfigMap: core.ConfigMap, Secret: core.Secret, Service: core.Service },
  'apps/v1': { Deployment: apps.Deployment },
  'networking.k8s.io/v1': { Ingress: networking.Ingress },
  'policy/v1': { PodDisruptionBudget: policy.PodDisruptionBudget },
};

// biome-ignore lint/suspicious/noExplicitAny: manifests are plain YAML; each claim below reads the fields it checks.
type Manifest = any;

const manifests: { file: string; manifest: Manifest }[] = readdirSync(folder)
  .filter((file) => /\.ya?ml$/.test(file))
  .sort()
  .flatMap((file) =>
    parseAllDocuments(readFileSync(join(folder, file), 'utf8')).map((document) => {
      if (document.errors.length > 0 || document.warnings.length > 0) {
        throw new Error(`${file}: ${[...document.errors, ...document.warnings].join('; ')}`);
      }
      return { file, manifest: document.toJS() as Manifest };
    }),
  );

const byKind = (kind: string) => manifests.filter(({ manifest }) => manifest.kind === kind);
const deployment = (component: string): Manifest =>
  byKind('Deployment').find(
    ({ manifest }) => manifest.spec.template.metadata.labels['app.kubernetes.io/component'] === component,
  )?.manifest;

function validate(manifest: Manifest): void {
  const model = MODELS[manifest.apiVersion]?.[manifest.kind];
  if (model === undefined) throw new Error(`No schema for ${manifest.apiVersion} ${manifest.kind}`);
  new model(manifest as never).validate();
}

const scratch = mkdtempSync(join(tmpdir(), 'kubernetes-manifests-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * The configuration the worker in this Deployment's container reads, by the worker's own loader: its environment as
 * the manifest sets it (a Secret's value stands in), and the files the ConfigMaps it mounts hold, written where the
 * container would see them, under a scratch folder.
 */
function workerConfigOf(manifest: Manifest): WorkerConfig {
  const pod = manifest.spec.template.spec;
  const container = pod.containers[0];
  const env: Record<string, string> = {};
  for (const variable of container.env) {
    env[variable.name] = variable.value ?? `from-secret-${variable.valueFrom.secretKeyRef.name}`;
  }
  for (const mount of container.volumeMounts) {
    const volume = pod.volumes.find((candidate: Manifest) => candidate.name === mount.name);
    if (volume.configMap === undefined) continue;
    const configMap = byKind('ConfigMap').find(
      ({ manifest: map }) => map.metadata.name === volume.configMap.name,
    );
    for (const [name, text] of Object.entries(configMap?.manifest.data ?? {})) {
      const inside = join(mount.mountPath, name);
      if (env.CONNECTOR_CONFIG === inside) {
        const path = join(scratch, `${manifest.metadata.name}-${basename(inside)}`);
        writeFileSync(path, text as string);
        env.CONNECTOR_CONFIG = path;
      }
    }
  }
  const config = loadWorkerConfig({ env, argv: [], isTerminal: false });
  if (config === 'help') throw new Error('unexpected help');
  return config;
}

describe('the Kubernetes manifests', () => {
  it('are each valid by the schema of their kind', () => {
    expect(manifests.map(({ manifest }) => `${manifest.apiVersion} ${manifest.kind}`).sort()).toEqual([
      'apps/v1 Deployment',
      'apps/v1 Deployment',
      'networking.k8s.io/v1 Ingress',
      'policy/v1 PodDisruptionBudget',
      'v1 ConfigMap',
      'v1 Service',
    ]);
    for (const { file, manifest } of manifests) {
      expect(() => validate(manifest), file).not.toThrow();
    }
  });

  it('are checked for real: a field of the wrong type is refused', () => {
    const broken = structuredClone(deployment('tasks'));
    broken.spec.replicas = 'two';
    expect(() => validate(broken)).toThrow(/replicas must be integer/);
    const probe = structuredClone(deployment('sync'));
    probe.spec.template.spec.containers[0].livenessProbe.httpGet.path = 42;
    expect(() => validate(probe)).toThrow(/path must be string/);
  });

  it('run one sync replica, replaced with Recreate, and several task replicas rolled one by one', () => {
    const sync = deployment('sync');
    expect(sync.spec.replicas).toBe(1);
    expect(sync.spec.strategy).toEqual({ type: 'Recreate' });
    expect(workerConfigOf(sync).role).toBe('sync');

    const tasks = deployment('tasks');
    expect(tasks.spec.replicas).toBeGreaterThan(1);
    expect(tasks.spec.strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: 1, maxUnavailable: 0 },
    });
    expect(workerConfigOf(tasks).role).toBe('tasks');
  });

  describe.each(['sync', 'tasks'])('the %s Deployment', (component) => {
    const manifest = deployment(component);
    const pod = manifest.spec.template.spec;
    const container = pod.containers[0];
    const env = (name: string) => container.env.find((variable: Manifest) => variable.name === name);

    it('selects its own pods', () => {
      expect(manifest.spec.selector.matchLabels).toEqual(
        expect.objectContaining({ 'app.kubernetes.io/component': component }),
      );
      for (const [label, value] of Object.entries(manifest.spec.selector.matchLabels)) {
        expect(manifest.spec.template.metadata.labels[label]).toBe(value);
      }
    });

    it('sets only variables the worker reads, and a configuration it accepts', () => {
      for (const variable of container.env) expect(WORKER_VARIABLES).toContain(variable.name);
      expect(() => workerConfigOf(manifest)).not.toThrow();
    });

    it('probes /healthz and /readyz on the operations port the worker opens, on every interface', () => {
      const { options } = workerConfigOf(manifest);
      expect(options.operations).toMatchObject({ host: '0.0.0.0' });
      const port = (options.operations as { port: number }).port;
      const named = container.ports.find((candidate: Manifest) => candidate.name === 'ops');
      expect(named.containerPort).toBe(port);
      expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'ops' });
      expect(container.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'ops' });
      expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'ops' });
      // The port opens as the worker starts; startup only covers loading the module, a minute at most.
      const { periodSeconds, failureThreshold } = container.startupProbe;
      expect(periodSeconds * failureThreshold).toBe(60);
    });

    it('runs as a user that is not root, with nothing it does not need', () => {
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      expect(pod.automountServiceAccountToken).toBe(false);
      expect(container.securityContext).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
    });

    it('is scraped by Prometheus on that port', () => {
      const { options } = workerConfigOf(manifest);
      expect(manifest.spec.template.metadata.annotations).toEqual({
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': String((options.operations as { port: number }).port),
        'prometheus.io/path': '/metrics',
      });
    });

    it('gives the worker longer than its stop deadline before the kubelet kills it', () => {
      const { shutdown } = resolveConnectorOptions(workerConfigOf(manifest).options);
      const deadlineMs = shutdown.graceMs + shutdown.forceMs + SHUTDOWN_MARGIN_MS;
      expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(deadlineMs);
    });

    it('requests at least the peak memory the benchmark measured for a sync worker, and cites that measurement', () => {
      const results = readFileSync(fileURLToPath(new URL('../../bench/RESULTS.md', import.meta.url)), 'utf8');
      const commit = /^- Commit: (\w+)$/m.exec(results)?.[1];
      const date = /^- Date: (\d{4}-\d\d-\d\d)/m.exec(results)?.[1];
      // The highest of every round, not only the median, of the kit's peak RSS rows.
      const peaks = [
        ...results.matchAll(
          /^\| peak RSS, kit defaults, [\d,]+ approvals \| [\d.]+ \([\d.]+-([\d.]+)\) MiB \|/gm,
        ),
      ].map((row) => Number(row[1]));
      expect(peaks).toHaveLength(2);
      const { requests, limits } = container.resources;
      const mebibytes = (quantity: string) => Number(/^(\d+)Mi$/.exec(quantity)?.[1]);
      expect(mebibytes(requests.memory)).toBeGreaterThanOrEqual(Math.max(...peaks));
      expect(mebibytes(limits.memory)).toBeGreaterThan(mebibytes(requests.memory));
      const text = readFileSync(join(folder, `${component}-deployment.yaml`), 'utf8');
      expect(text).toContain(`commit ${commit}, ${date}`);
      expect(text).toContain(`${Math.max(...peaks)}`);
    });

    it('takes the token from a Secret', () => {
      expect(env('APPROVAL_CONNECTOR_TOKEN').valueFrom.secretKeyRef).toEqual({
        name: 'approval-connector-token',
        key: 'token',
      });
      expect(JSON.stringify(byKind('ConfigMap'))).not.toMatch(/token/i);
    });

    it('reads the keys from the Secret shared by every replica, mounted read-only and kept current', () => {
      const keysFile = env('CONNECTOR_KEYS_FILE').value as string;
      expect(env('CONNECTOR_KEYS_READ_ONLY').value).toBe('true');
      const mount = container.volumeMounts.find(
        (candidate: Manifest) => candidate.mountPath === dirname(keysFile),
      );
      // A subPath mount would never see the Secret change, and so never a key the operator adds.
      expect(mount).toEqual({ name: 'keys', mountPath: dirname(keysFile), readOnly: true });
      const volume = pod.volumes.find((candidate: Manifest) => candidate.name === mount.name);
      expect(volume.secret).toEqual({ secretName: 'approval-connector-keys', optional: true });
      expect(workerConfigOf(manifest).options.keyStore).toMatchObject({ readOnly: true });
    });
  });

  describe('expose the push ingress of the sync worker', () => {
    const sync = deployment('sync');
    const container = sync.spec.template.spec.containers[0];
    const push = () => resolveConnectorOptions(workerConfigOf(sync).options).push as ResolvedPushOptions;
    const [service] = byKind('Service').map(({ manifest }) => manifest);
    const [ingress] = byKind('Ingress').map(({ manifest }) => manifest);
    const labels = (component: string) => deployment(component).spec.template.metadata.labels;
    const selects = (component: string) =>
      Object.entries(service.spec.selector).every(([label, value]) => labels(component)[label] === value);

    it('on the port the worker opens for it, on every interface, the sync worker alone', () => {
      expect(push()).toMatchObject({ port: 9465, host: '0.0.0.0', path: '/push' });
      const named = container.ports.find((candidate: Manifest) => candidate.name === 'push');
      expect(named.containerPort).toBe(push().port);
      const tasks = deployment('tasks').spec.template.spec.containers[0];
      expect(tasks.ports.map((port: Manifest) => port.name)).toEqual(['ops']);
    });

    it('through a Service of that port alone, which selects the sync pods and no others', () => {
      expect(selects('sync')).toBe(true);
      expect(selects('tasks')).toBe(false);
      expect(service.spec.ports).toEqual([{ name: 'push', port: push().port, targetPort: 'push' }]);
    });

    it('through an Ingress of the push path alone, over TLS, at the address the webhook is registered for', () => {
      const [rule] = ingress.spec.rules;
      expect(ingress.spec.rules).toHaveLength(1);
      expect(rule.http.paths).toEqual([
        {
          path: push().path,
          pathType: 'Exact',
          backend: { service: { name: service.metadata.name, port: { name: 'push' } } },
        },
      ]);
      expect(ingress.spec.tls).toEqual([{ hosts: [rule.host], secretName: expect.any(String) }]);
      const publicUrl = new URL(push().publicUrl as string);
      expect(publicUrl.protocol).toBe('https:');
      expect(`${publicUrl.host}${publicUrl.pathname}`).toBe(`${rule.host}${push().path}`);
    });

    it('with the webhook secret from a Secret, never the ConfigMap', () => {
      const secret = container.env.find((variable: Manifest) => variable.name === 'PUSH_SECRET');
      expect(secret.valueFrom.secretKeyRef).toEqual({
        name: 'approval-connector-webhook',
        key: 'secret',
        optional: true,
      });
      expect(push().secret).toBe('from-secret-approval-connector-webhook');
      expect(JSON.stringify(byKind('ConfigMap'))).not.toMatch(/secret/i);
    });
  });

  it('budget disruptions of the task workers only, one at a time', () => {
    const [budget] = byKind('PodDisruptionBudget').map(({ manifest }) => manifest);
    expect(budget.spec.maxUnavailable).toBe(1);
    const selects = (component: string) =>
      Object.entries(budget.spec.selector.matchLabels).every(
        ([label, value]) => deployment(component).spec.template.metadata.labels[label] === value,
      );
    expect(selects('tasks')).toBe(true);
    expect(selects('sync')).toBe(false);
  });
});
