import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { TaskResultStatus } from '../../src/api/index.js';
import { createTestHarness } from '../../src/testing/index.js';
import { PUSH_OUTCOMES } from '../../src/worker/operations/push-metrics.js';
import { MemoryConnector, MemorySource } from '../worker/support/memory-source.js';
import { evaluate, groupingLabelsOf, parseSamples, selectorsOf } from './support/promql.js';

// The alert rules read the worker's metrics by name: a name that drifts from what the worker exports makes a rule
// that can never fire. Each expression here is parsed by Prometheus' own grammar, and every metric, label and label
// value it names is one a running worker exports.

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: { severity: string };
  annotations: { summary: string; description: string };
}

const file = (name: string) =>
  parse(readFileSync(new URL(`../../deploy/kubernetes/monitoring/${name}`, import.meta.url), 'utf8'));
const rules: Rule[] = file('alert-rules.yaml').spec.groups.flatMap((group: { rules: Rule[] }) => group.rules);
const rule = (alert: string) => {
  const found = rules.find((candidate) => candidate.alert === alert);
  if (found === undefined) throw new Error(`No rule ${alert}`);
  return found;
};

/** Labels Prometheus adds to every series it scrapes through the PodMonitor. */
const TARGET_LABELS = ['job', 'instance', 'namespace', 'pod', 'container', 'endpoint'];

/** The metrics a running worker exports, each with its label names, as its /metrics answer and registry say. */
let exported: Map<string, readonly string[]>;

beforeAll(async () => {
  const harness = await createTestHarness();
  try {
    const worker = await harness.start(new MemoryConnector(new MemorySource()), { operations: { port: 0 } });
    const scrape = await (await request(`${worker.operationsUrl}/metrics`)).body.text();
    exported = new Map();
    for (const [, name, type] of scrape.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      const metric = worker.metrics.registry.getSingleMetric(name as string) as unknown as {
        labelNames: string[];
      };
      const suffixes = type === 'histogram' ? ['_bucket', '_sum', '_count'] : [''];
      const labels = type === 'histogram' ? [...metric.labelNames, 'le'] : metric.labelNames;
      for (const suffix of suffixes) exported.set(`${name}${suffix}`, labels);
    }
  } finally {
    await harness.close();
  }
});

describe('the alert rules', () => {
  it('watch each stall an operator must not miss, and no more', () => {
    expect(rules.map((candidate) => candidate.alert)).toEqual([
      'ApprovalConnectorDown', // a worker down
      'ApprovalConnectorNotReady',
      'ApprovalConnectorSyncFailing', // a sync failing N times in a row
      'ApprovalConnectorCursorFrozen', // a frozen cursor
      'ApprovalConnectorTasksFailing', // tasks failing
      'ApprovalConnectorTaskResultsLost',
      'ApprovalConnectorKeyExpiring', // a key close to expiry
      'ApprovalConnectorNotLeasing', // no lease for a long time while tasks wait
      'ApprovalConnectorPushDegraded', // push quiet while the sync finds changes
      'ApprovalConnectorPushDeliveriesRefused', // forged signatures
    ]);
    for (const each of rules) {
      expect(['critical', 'warning'], each.alert).toContain(each.labels.severity);
      expect(each.annotations.summary, each.alert).toMatch(/\.$/);
    }
  });

  it.each(rules.map((each) => [each.alert, each]))(
    '%s reads only metrics a worker exports, by labels they have',
    (_alert, { expr }) => {
      const selectors = selectorsOf(expr);
      expect(selectors.length).toBeGreaterThan(0);
      const labels = new Set(TARGET_LABELS);
      for (const { name, matchers } of selectors) {
        // `up` is Prometheus' own, one per scraped target.
        const known = name === 'up' ? [] : exported.get(name);
        expect(known, `${name} is not a metric a worker exports`).toBeDefined();
        for (const label of known ?? []) labels.add(label);
        for (const matcher of matchers) {
          expect([...TARGET_LABELS, ...(known ?? [])], `${name}{${matcher.label}}`).toContain(matcher.label);
        }
      }
      for (const label of groupingLabelsOf(expr)) expect([...labels], `by (${label})`).toContain(label);
    },
  );

  it('name only label values the worker and the PodMonitor give', () => {
    const { jobLabel, selector } = file('pod-monitor.yaml').spec;
    const values: Record<string, readonly string[]> = {
      status: TaskResultStatus.options,
      outcome: PUSH_OUTCOMES,
      job: [selector.matchLabels[jobLabel]],
    };
    for (const { alert, expr } of rules) {
      for (const { matchers } of selectorsOf(expr)) {
        for (const { label, op, value } of matchers) {
          const allowed = values[label];
          expect(allowed, `${alert}: a matcher on ${label}, which this test does not know`).toBeDefined();
          const named = op.endsWith('~') ? value.split('|') : [value];
          for (const each of named) expect(allowed, `${alert}: ${label}="${each}"`).toContain(each);
        }
      }
    }
  });

  it('are the ones docs/operations.md lists, with their expressions, waits and severities', () => {
    const docs = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
    const rows = [...docs.matchAll(/^\| `(ApprovalConnector\w+)` \| (.*?) \|\s*(\w*)\s*\| (\w+) \|$/gm)];
    expect(rows.map(([, alert]) => alert)).toEqual(rules.map((each) => each.alert));
    for (const [, alert, described, wait, severity] of rows) {
      const shipped = rule(alert as string);
      // An expression written as code is the rule's own; one told in words says what it compares.
      const code = /^`([^`]+)`/.exec(described as string)?.[1];
      if (code !== undefined) expect(code, alert).toBe(shipped.expr);
      expect(wait, alert).toBe(shipped.for ?? '');
      expect(severity, alert).toBe(shipped.labels.severity);
    }
  });

  it('fire on a lease age past the watchdog’s restart only, and on a key within two days of its expiry', () => {
    const at = (name: string, value: number) => parseSamples(`${name} ${value}\n`);
    const notLeasing = rule('ApprovalConnectorNotLeasing').expr;
    // poller.watchdogMs (2 minutes by default) restarts a stalled poll first.
    expect(evaluate(notLeasing, at('approval_connector_lease_age_seconds', 120))).toEqual([]);
    expect(evaluate(notLeasing, at('approval_connector_lease_age_seconds', 301))).toHaveLength(1);
    const keyExpiring = rule('ApprovalConnectorKeyExpiring').expr;
    expect(evaluate(keyExpiring, at('approval_connector_key_expiry_seconds', 7 * 86_400))).toEqual([]);
    expect(evaluate(keyExpiring, at('approval_connector_key_expiry_seconds', 86_400))).toHaveLength(1);
    expect(evaluate(keyExpiring, at('approval_connector_key_expiry_seconds', -60))).toHaveLength(1);
  });
});
