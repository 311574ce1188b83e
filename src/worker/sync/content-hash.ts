import { createHash } from 'node:crypto';

/** A digest of what the app shows of an approval, independent of key order. */
export function contentHash(approval: {
  schemaId: string;
  approver: string;
  resolved: boolean;
  data?: unknown;
}): string {
  const { schemaId, approver, resolved, data } = approval;
  return createHash('sha256')
    .update(stableJson({ schemaId, approver, resolved, data: data ?? {} }))
    .digest('base64url');
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stableJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
