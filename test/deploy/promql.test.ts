import { describe, expect, it } from 'vitest';
import { evaluate, parsePromQL, parseSamples, selectorsOf } from './support/promql.js';

// The evaluator the alert rules' tests trust: it must agree with Prometheus on what it evaluates, and refuse what it
// cannot, so that a rule it cannot judge never passes as "does not fire".

const samples = parseSamples(
  [
    '# HELP approval_connector_ready 1 while ready',
    '# TYPE approval_connector_ready gauge',
    'approval_connector_ready 1',
    'approval_connector_sync_consecutive_failures{mode="incremental"} 3',
    'approval_connector_sync_consecutive_failures{mode="lookup"} 0',
    'approval_connector_key_expiry_seconds 90000',
    'approval_connector_tasks_total{type="approve",status="systemError"} 2',
    'approval_connector_tasks_total{type="approve",status="success"} 5',
    'label_with_escapes{path="a\\"b"} 1',
    '',
  ].join('\n'),
);

describe('the PromQL of the alert rules’ tests', () => {
  it('reads the samples of a scrape', () => {
    expect(samples).toHaveLength(7);
    expect(samples[1]).toEqual({
      name: 'approval_connector_sync_consecutive_failures',
      labels: { mode: 'incremental' },
      value: 3,
    });
    expect(samples[6]?.labels).toEqual({ path: 'a"b' });
  });

  it('refuses what Prometheus would refuse', () => {
    expect(() => parsePromQL('approval_connector_ready{')).toThrow(/Not PromQL/);
    expect(() => parsePromQL('sum by (type (x)')).toThrow(/Not PromQL/);
    expect(() => parsePromQL('rate(x[5m]) > 0')).not.toThrow();
  });

  it('reads every selector of an expression, inside functions and aggregations, with its matchers', () => {
    expect(
      selectorsOf(
        'sum by (type) (rate(a_total{status=~"x|y"}[5m])) / sum by (type) (rate(a_total[5m])) > 0.1 or {__name__="b", job!="c"}',
      ),
    ).toEqual([
      { name: 'a_total', matchers: [{ label: 'status', op: '=~', value: 'x|y' }] },
      { name: 'a_total', matchers: [] },
      { name: 'b', matchers: [{ label: 'job', op: '!=', value: 'c' }] },
    ]);
  });

  it('evaluates thresholds, with arithmetic on numbers, as Prometheus does', () => {
    expect(evaluate('approval_connector_sync_consecutive_failures >= 3', samples)).toEqual([samples[1]]);
    expect(evaluate('approval_connector_sync_consecutive_failures >= 4', samples)).toEqual([]);
    expect(evaluate('approval_connector_key_expiry_seconds < 2 * 86400', samples)).toHaveLength(1);
    expect(evaluate('approval_connector_key_expiry_seconds < (86400)', samples)).toEqual([]);
    expect(evaluate('3 <= approval_connector_sync_consecutive_failures', samples)).toEqual([samples[1]]);
    expect(evaluate('approval_connector_tasks_total{status=~"system.*|internalError"}', samples)).toEqual([
      samples[4],
    ]);
    expect(evaluate('approval_connector_tasks_total{status!="success"} * 2 > 3', samples)).toEqual([
      { name: '', labels: { type: 'approve', status: 'systemError' }, value: 4 },
    ]);
  });

  it('evaluates and, or and unless on label sets', () => {
    const failing = 'approval_connector_sync_consecutive_failures > 0';
    expect(
      evaluate(`${failing} and approval_connector_sync_consecutive_failures{mode="incremental"}`, samples),
    ).toEqual([samples[1]]);
    expect(
      evaluate(`${failing} unless approval_connector_sync_consecutive_failures{mode="incremental"}`, samples),
    ).toEqual([]);
    expect(evaluate(`${failing} or approval_connector_ready == 1`, samples)).toEqual([
      samples[1],
      samples[0],
    ]);
  });

  it('refuses to evaluate what it does not know, rather than answer that nothing fires', () => {
    expect(() => evaluate('rate(approval_connector_tasks_total[5m]) > 0', samples)).toThrow(
      /Cannot evaluate/,
    );
    expect(() => evaluate('sum(approval_connector_ready) > 0', samples)).toThrow(/Cannot evaluate/);
    expect(() => evaluate('approval_connector_ready > bool 0', samples)).toThrow(/modifiers/);
    expect(() => evaluate('1 > 0', samples)).toThrow(/needs bool/);
  });
});
