/** SPEC section 8: notifications top-right with these colours and durations. */
export const toastKinds = ['success', 'error', 'warning', 'info'] as const;
export type ToastKind = (typeof toastKinds)[number];

export const toastDurationMs: Record<ToastKind, number> = {
  success: 4000,
  error: 5000,
  warning: 4000,
  info: 4000,
};
