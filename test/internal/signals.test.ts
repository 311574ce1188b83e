import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { onShutdownSignal } from '../../src/internal/signals.js';

describe('onShutdownSignal', () => {
  it('resolves on the first signal, and leaves a second to Node’s default, which ends the process', async () => {
    const source = new EventEmitter();
    const signal = onShutdownSignal(source);
    source.emit('SIGTERM', 'SIGTERM');
    expect(await signal).toBe('SIGTERM');
    expect(source.listenerCount('SIGINT') + source.listenerCount('SIGTERM')).toBe(0);
  });

  it('keeps hearing and ignoring every later signal when asked to', async () => {
    const source = new EventEmitter();
    const signal = onShutdownSignal(source, { repeated: 'ignore' });
    source.emit('SIGINT', 'SIGINT');
    expect(await signal).toBe('SIGINT');
    for (const again of ['SIGINT', 'SIGINT', 'SIGTERM'] as const) {
      source.emit(again, again);
      // A listener stays, so that Node's default never ends the process.
      expect(source.listenerCount('SIGINT')).toBe(1);
      expect(source.listenerCount('SIGTERM')).toBe(1);
    }
  });
});
