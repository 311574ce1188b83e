import { readFileSync } from 'node:fs';
import * as apps from 'kubernetes-models/apps/v1';
import * as core from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';

// The deploy/ example of sending the workers' traces to a collector (docs/tracing.md).

const read = (path: string) => readFileSync(new URL(`../../deploy/${path}`, import.meta.url), 'utf8');
// biome-ignore lint/suspicious/noExplicitAny: manifests are plain YAML; each claim below reads the fields it checks.
type Manifest = any;
const collector: Manifest[] = parseAllDocuments(read('opentelemetry/collector.yaml')).map((document) =>
  document.toJS(),
);
const patch: Manifest = parse(read('opentelemetry/connector-tracing.yaml'));
const of = (kind: string) => collector.find((manifest) => manifest.kind === kind);

describe('deploy/opentelemetry', () => {
  it('holds a collector valid by the schema of each kind: its config, its Deployment and its Service', () => {
    expect(collector.map((manifest) => manifest.kind)).toEqual(['ConfigMap', 'Deployment', 'Service']);
    new core.ConfigMap(of('ConfigMap')).validate();
    new apps.Deployment(of('Deployment')).validate();
    new core.Service(of('Service')).validate();
  });

  it('receives OTLP over HTTP on 4318, where the patch points the workers, and sends traces on', () => {
    const config = parse(of('ConfigMap').data['config.yaml']);
    expect(config.receivers.otlp.protocols.http.endpoint).toBe('0.0.0.0:4318');
    expect(config.service.pipelines.traces.receivers).toEqual(['otlp']);
    const service = of('Service');
    const env = Object.fromEntries(
      patch.spec.template.spec.containers[0].env.map((variable: Manifest) => [variable.name, variable.value]),
    );
    expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe(
      `http://${service.metadata.name}:${service.spec.ports[0].port}`,
    );
    expect(env).toMatchObject({ OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none' });
  });

  it('patches the container the connector Deployments run', () => {
    for (const file of ['sync-deployment.yaml', 'tasks-deployment.yaml']) {
      const deployment = parse(read(`kubernetes/${file}`));
      expect(deployment.spec.template.spec.containers.map((container: Manifest) => container.name)).toContain(
        patch.spec.template.spec.containers[0].name,
      );
    }
  });
});
