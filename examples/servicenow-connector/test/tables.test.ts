import { describe, expect, it } from 'vitest';
import { money, wallClock } from '../simulator/tables.js';

describe('the simulated instance’s display values', () => {
  it('shows a date-time as the wall clock of the reader’s time zone, in the Table API’s format, however often and in whatever order zones are asked', () => {
    const cases = [
      ['2026-03-02 09:00:07', 'GMT', '2026-03-02 09:00:07'],
      ['2026-03-02 09:00:07', 'America/Los_Angeles', '2026-03-02 01:00:07'],
      ['2026-03-02 09:00:07', 'Asia/Kolkata', '2026-03-02 14:30:07'],
      ['2026-07-01 12:00:00', 'Europe/Berlin', '2026-07-01 14:00:00'],
      ['2026-01-15 12:00:00', 'Europe/Berlin', '2026-01-15 13:00:00'],
      ['2026-03-01 23:30:00', 'Asia/Kolkata', '2026-03-02 05:00:00'],
      ['2026-03-02 00:00:00', 'GMT', '2026-03-02 00:00:00'],
    ] as const;
    for (let round = 0; round < 2; round += 1) {
      for (const [value, zone, shown] of cases)
        expect(wallClock(value, zone), `${value} in ${zone}`).toBe(shown);
    }
    expect(wallClock('', 'GMT')).toBe('');
    expect(wallClock('not a date', 'GMT')).toBe('');
  });

  it('shows an amount in dollars', () => {
    expect(money('1299')).toBe('$1,299.00');
    expect(money('0.5')).toBe('$0.50');
    expect(money('')).toBe('');
    expect(money('n/a')).toBe('n/a');
  });
});
