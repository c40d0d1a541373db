import { useSelector } from '@xstate/react';
import { Toast } from 'radix-ui';
import { X } from 'lucide-react';
import { toastDurationMs, type ToastKind } from '../../domain/toast';
import { i18next } from '../../i18n';
import { useAppActors } from '../app-context';

const kindClasses: Record<ToastKind, string> = {
  success: 'bg-green-600 text-white',
  error: 'bg-red-600 text-white',
  warning: 'bg-amber-500 text-slate-950',
  info: 'bg-blue-600 text-white',
};

/** SPEC section 8: notifications in the top-right corner, each closing after its duration. */
export function Toaster() {
  const { toasts } = useAppActors();
  const items = useSelector(toasts, (snapshot) => snapshot.context.toasts);
  return (
    <Toast.Provider swipeDirection="right" label={i18next.t('toast.label')}>
      {items.map((toast) => (
        <Toast.Root
          key={toast.id}
          duration={toastDurationMs[toast.kind]}
          data-kind={toast.kind}
          onOpenChange={(open) => {
            if (!open) toasts.send({ type: 'TOAST.DISMISS', id: toast.id });
          }}
          className={`flex items-start gap-3 rounded-lg px-4 py-3 shadow-lg ${kindClasses[toast.kind]}`}
        >
          <div className="flex-1">
            <Toast.Description className="text-sm font-medium">{toast.message}</Toast.Description>
            {toast.link && (
              <Toast.Action altText={toast.link.label} asChild>
                <a
                  href={toast.link.href}
                  target="_blank"
                  rel="noopener noreferrer"
                  data-testid="toast-link"
                  className="mt-1 inline-block text-sm font-semibold underline underline-offset-2"
                >
                  {toast.link.label}
                </a>
              </Toast.Action>
            )}
          </div>
          <Toast.Close aria-label={i18next.t('toast.close')} className="opacity-80 hover:opacity-100">
            <X className="h-4 w-4" />
          </Toast.Close>
        </Toast.Root>
      ))}
      {/* Top-right, below the 4rem header: the balance, the menu and logout stay visible and usable. */}
      <Toast.Viewport className="fixed top-[4.5rem] right-4 z-[100] flex w-[min(24rem,calc(100vw-2rem))] flex-col gap-2 outline-none" />
    </Toast.Provider>
  );
}
