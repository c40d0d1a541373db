import { Link } from '@tanstack/react-router';
import { AlertDialog, Dialog } from 'radix-ui';
import type { ReactElement } from 'react';
import { AlertCircle, Plus, RotateCw, Trash2 } from 'lucide-react';
import { errorText } from '../../api/error-text';
import { relativeDateLabel } from '../../domain/chat';
import type { ConversationSummary } from '../../domain/conversation';
import type { ListState } from '../../machines/chat-page';
import { i18next } from '../../i18n';
import { formatDateAs } from '../../i18n/format';
import { Spinner } from '../common/Spinner';
import { conversationTitle } from './texts';

const t = i18next.t;

function dateLabel(iso: string): string {
  const label = relativeDateLabel(iso);
  switch (label.kind) {
    case 'today':
      return t('chat:sidebar.today');
    case 'yesterday':
      return t('chat:sidebar.yesterday');
    case 'daysAgo':
      return t('chat:sidebar.daysAgo', { count: label.n });
    case 'date':
      return formatDateAs(label.date, 'shortDate');
  }
}

function DeleteButton({ title, onConfirm }: { title: string; onConfirm: () => void }) {
  return (
    <AlertDialog.Root>
      <AlertDialog.Trigger
        aria-label={`${t('chat:sidebar.delete')}: ${title}`}
        data-testid="delete-conversation"
        className="rounded p-1 text-slate-500 opacity-70 hover:bg-red-50 hover:text-red-600 focus:opacity-100 group-hover:opacity-100"
      >
        <Trash2 className="h-4 w-4" />
      </AlertDialog.Trigger>
      <AlertDialog.Portal>
        <AlertDialog.Overlay className="fixed inset-0 z-40 bg-black/40" />
        <AlertDialog.Content className="fixed top-1/2 left-1/2 z-50 w-[90vw] max-w-sm -translate-x-1/2 -translate-y-1/2 rounded-xl bg-white p-5 shadow-xl">
          <AlertDialog.Title className="text-lg font-semibold">{t('chat:deleteDialog.title')}</AlertDialog.Title>
          <AlertDialog.Description className="mt-2 text-sm text-slate-600">
            {t('chat:deleteDialog.text')}
          </AlertDialog.Description>
          <div className="mt-4 flex justify-end gap-2">
            <AlertDialog.Cancel className="rounded-lg px-3 py-2 text-sm hover:bg-slate-100">
              {t('chat:deleteDialog.cancel')}
            </AlertDialog.Cancel>
            <AlertDialog.Action
              onClick={onConfirm}
              data-testid="confirm-delete"
              className="rounded-lg bg-red-600 px-3 py-2 text-sm text-white hover:bg-red-700"
            >
              {t('chat:deleteDialog.confirm')}
            </AlertDialog.Action>
          </div>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}

export function Sidebar({
  conversations,
  list = { kind: 'loaded' },
  openId,
  onDelete,
  onRetry,
  inDrawer = false,
}: {
  conversations: ConversationSummary[];
  list?: ListState;
  openId: number | null;
  onDelete: (id: number) => void;
  onRetry?: () => void;
  /** Shown in the phone's drawer: following a link closes it; deleting keeps it open. */
  inDrawer?: boolean;
}) {
  const closing = (link: ReactElement) => (inDrawer ? <Dialog.Close asChild>{link}</Dialog.Close> : link);
  return (
    <nav className="flex h-full flex-col" aria-label={t('chat:sidebar.title')}>
      <div className="p-3">
        {closing(
          <Link
            to="/chat"
            // Current only on /chat itself, not while a conversation (/chat/12) is open.
            activeOptions={{ exact: true }}
            data-testid="new-chat"
            className="flex w-full items-center justify-center gap-2 rounded-lg bg-indigo-600 px-3 py-2 text-sm font-medium text-white hover:bg-indigo-700"
          >
            <Plus className="h-4 w-4" /> {t('chat:sidebar.newChat')}
          </Link>,
        )}
      </div>
      <ul className="flex-1 space-y-1 overflow-y-auto px-2 pb-3" data-testid="conversation-list">
        {list.kind === 'failed' && (
          <li
            role="alert"
            className="mx-1 rounded-lg bg-red-50 p-3 text-sm text-red-800"
            data-testid="conversations-failed"
          >
            <p className="flex items-start gap-2">
              <AlertCircle className="mt-0.5 h-4 w-4 shrink-0" aria-hidden />
              {errorText(list.problem, 'chat')}
            </p>
            <button
              type="button"
              onClick={onRetry}
              data-testid="conversations-retry"
              className="mt-2 flex items-center gap-1 rounded-lg border border-red-200 bg-white px-3 py-1.5 font-medium text-red-800 hover:bg-red-100"
            >
              <RotateCw className="h-4 w-4" aria-hidden /> {t('chat:lists.retry')}
            </button>
          </li>
        )}
        {list.kind === 'loading' && (
          <li className="flex justify-center py-4" data-testid="conversations-loading">
            <Spinner />
          </li>
        )}
        {list.kind === 'loaded' && conversations.length === 0 && (
          <li className="px-2 py-4 text-center text-sm text-slate-600">{t('chat:sidebar.empty')}</li>
        )}
        {conversations.map((c) => (
          <li
            key={c.id}
            className={`group flex items-center gap-1 rounded-lg ${c.id === openId ? 'bg-indigo-50' : 'hover:bg-slate-100'}`}
          >
            {closing(
              <Link
                to="/chat/$conversationId"
                params={{ conversationId: String(c.id) }}
                className="min-w-0 flex-1 px-3 py-2"
                data-testid="conversation-link"
              >
                <p
                  className={`truncate text-sm ${c.id === openId ? 'font-semibold text-indigo-700' : 'text-slate-800'}`}
                >
                  {conversationTitle(c.title)}
                </p>
                <p className="text-xs text-slate-600">{dateLabel(c.updatedAt)}</p>
              </Link>,
            )}
            <DeleteButton title={conversationTitle(c.title)} onConfirm={() => onDelete(c.id)} />
          </li>
        ))}
      </ul>
    </nav>
  );
}
