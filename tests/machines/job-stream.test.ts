import { describe, expect, it } from 'vitest';
import { retryDelayMs } from '../../src/machines/job-stream';
import { titleMark } from '../../src/machines/queue';

describe('the job stream pauses before reconnecting', () => {
  it('1 s after a first failure, doubling with each failure in a row, at most 30 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map(retryDelayMs)).toEqual([
      1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000,
    ]);
  });
});

describe('the page title while the tab is hidden (issue #28)', () => {
  it('counts the jobs that finished meanwhile, with a tick, or a warning if one failed', () => {
    expect(titleMark({ completed: 0, failed: 0 })).toBe('');
    expect(titleMark({ completed: 1, failed: 0 })).toBe('(1) ✓ ');
    expect(titleMark({ completed: 2, failed: 1 })).toBe('(3) ⚠ ');
  });
});
