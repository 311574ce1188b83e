import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MINIMUM_NODE_VERSION, unsupportedNodeMessage } from '../src/internal/node-version.js';

describe('the Node.js version check', () => {
  it('needs the version that package.json declares in engines', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(pkg.engines.node).toBe(`>=${MINIMUM_NODE_VERSION}`);
  });

  it.each(['22.19.0', '22.19.1', '22.20.0', '23.0.0', '24.21.0', 'v24.0.0', '25.0.0-nightly20260101'])(
    'accepts %s',
    (version) => {
      expect(unsupportedNodeMessage(version, '/opt/node/bin/node')).toBeUndefined();
    },
  );

  it.each(['22.18.9', '22.0.0', '21.7.3', '20.20.2', '18.20.8', 'v20.1.0'])('refuses %s', (version) => {
    expect(unsupportedNodeMessage(version, '/opt/node/bin/node')).toBeDefined();
  });

  it('names the version found, the version needed, the binary that ran, and how to get a newer one', () => {
    expect(unsupportedNodeMessage('20.20.2', '/opt/node/bin/node')).toBe(
      'approval-connector-kit needs Node.js 22.19.0 or newer, but this is Node.js 20.20.2 (/opt/node/bin/node). ' +
        'Install a current LTS release from https://nodejs.org/en/download, or switch with a version manager ' +
        '(for example `nvm install --lts`), then run it again.',
    );
  });
});
