import { describe, expect, it } from 'vitest';
import { toastDurationMs, toastKinds } from '../../src/domain/toast';

describe('toasts (SPEC 8 and 9)', () => {
  it('come in the four kinds SPEC 8 names', () => {
    expect([...toastKinds].sort()).toEqual(['error', 'info', 'success', 'warning']);
  });

  it('stay up 4 s for success, 5 s for an error, 4 s for info and warning', () => {
    // SPEC 9: "success 4000 ms, error 5000 ms, info and warning 4000 ms".
    expect(toastDurationMs).toEqual({ success: 4000, error: 5000, warning: 4000, info: 4000 });
  });
});
