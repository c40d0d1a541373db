import { useSelector } from '@xstate/react';
import { ListTodo, X } from 'lucide-react';
import { Dialog } from 'radix-ui';
import { activeJobCount } from '../../domain/job-list';
import { i18next } from '../../i18n';
import { QueueBody } from './QueuePanel';
import { useQueue } from './queue-context';

const t = i18next.t;

/**
 * The header's way to the queue from every screen: the count of active jobs, opening the
 * queue in a side sheet (the queue chart's `panel` state: a job finishing while it is open
 * is seen there, not notified).
 */
export function QueueButton() {
  const queue = useQueue();
  const count = useSelector(queue, (s) => activeJobCount(s.context.jobs));
  const open = useSelector(queue, (s) => s.matches({ panel: 'open' }));
  return (
    <Dialog.Root open={open} onOpenChange={(next) => queue.send({ type: next ? 'PANEL.OPEN' : 'PANEL.CLOSE' })}>
      <Dialog.Trigger
        aria-label={t('queue:open', { count })}
        title={t('queue:title')}
        data-testid="queue-button"
        className="relative rounded-lg p-2 text-slate-700 hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-indigo-600"
      >
        <ListTodo className="h-5 w-5" aria-hidden />
        {count > 0 && (
          <span
            data-testid="queue-button-count"
            aria-hidden
            className="absolute -top-0.5 -right-0.5 flex h-4 min-w-4 items-center justify-center rounded-full bg-indigo-700 px-1 text-[0.6875rem] font-bold text-white"
          >
            {count}
          </span>
        )}
      </Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="fixed inset-0 z-50 bg-slate-900/40" />
        <Dialog.Content
          data-testid="queue-dialog"
          className="fixed inset-y-0 right-0 z-50 flex w-full max-w-md flex-col overflow-y-auto bg-white p-4 shadow-xl sm:p-5"
        >
          <div className="flex items-center justify-between gap-2">
            <Dialog.Title className="text-lg font-semibold">{t('queue:title')}</Dialog.Title>
            <Dialog.Close
              aria-label={t('queue:close')}
              data-testid="queue-dialog-close"
              className="rounded-lg p-1 text-slate-700 hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-indigo-600"
            >
              <X className="h-5 w-5" aria-hidden />
            </Dialog.Close>
          </div>
          <Dialog.Description className="sr-only">{t('queue:open', { count })}</Dialog.Description>
          <QueueBody />
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
