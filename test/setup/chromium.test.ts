import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findChromium } from './chromium.js';

describe('findChromium', () => {
  it('takes CHROMIUM_PATH first, with the kit’s flags', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'chromium-')), 'chrome');
    writeFileSync(path, '');
    const found = await findChromium({ CHROMIUM_PATH: path });
    expect(found).toMatchObject({ executablePath: path, source: 'CHROMIUM_PATH' });
    expect(found.args).toContain('--disable-background-networking');
  });

  it('refuses a CHROMIUM_PATH that names nothing, naming it', async () => {
    await expect(findChromium({ CHROMIUM_PATH: '/nowhere/chrome' })).rejects.toThrow(
      'CHROMIUM_PATH names /nowhere/chrome, which does not exist',
    );
  });

  it('finds a browser with nothing set, on any Linux machine through the packaged Chromium', async () => {
    const found = await findChromium({});
    expect(found.executablePath).toBeTruthy();
    if (process.platform === 'linux') {
      expect(['playwright', 'system', '@sparticuz/chromium']).toContain(found.source);
    }
  });
});
