// One file: one chart's walk: its table of what each state shows (SPEC) and the steps that drive it
// read side by side.
import { act, cleanup, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createActor, createMachine, type AnyEventObject, type AnyMachineSnapshot } from 'xstate';
import { ApiError } from '../../src/api/client';
import type { Job, JobList } from '../../src/domain/jobs';
import type { Language } from '../../src/i18n';
import { queueMachine, type QueueContext } from '../../src/machines/queue';
import { openApp, type OpenApp } from './support/app';
import { apiError, FakeApi, json, type Reply, type StreamWriter } from './support/fake-api';
import { NO_PAGES } from './support/fixtures';
import {
  answers,
  describeInvariants,
  describeScreenModel,
  replyOf,
  type Reached,
  type ScreenModel,
} from './support/model';

/*
 * The job queue (issue #28 item 3) walked along its statechart on the real app: the panel on
 * the dashboard, the header's count and sheet, the gallery as "elsewhere in the app", the tab
 * hidden and shown. The server is faked at fetch (GET /api/jobs, POST /api/jobs/:id/cancel,
 * GET /api/events), in the contract's shapes (src/domain/jobs.ts).
 *
 * What each state shows (the `sees` table below), beside what every state shows (`always`):
 *
 * | state                | what is asserted                                                            |
 * | -------------------- | --------------------------------------------------------------------------- |
 * | list.loading         | the panel says it loads; no jobs                                            |
 * | list.failed          | the failure with Try again                                                  |
 * | list.ready.refreshing| the jobs as last listed with each event and cancel since applied at once    |
 * |                      | (other jobs' places not yet moved); the list asked for again                |
 * | list.ready.idle      | the jobs as the server last listed them: model name, prompt, state, place in |
 * |                      | line, estimate, progress, error, image link, Cancel (disabled while pending, |
 * |                      | its failure under the job); the count "n of 4 in progress"; or the empty text |
 * | always               | the header's count of active jobs; the sheet open or not; the page (dashboard|
 * |                      | or gallery); the title marked "(n) ✓ " only while the tab is hidden and jobs |
 * |                      | finished meanwhile; the notification of a job that finished out of sight    |
 * |                      | (not on its own screen, sheet closed) with a link to its image, none        |
 * |                      | otherwise; the balance the last event or cancel stated; no stray request     |
 */

vi.setConfig({ testTimeout: 40_000 });

const JOBS = '/api/jobs';
const EVENTS = '/api/events';
const IMAGES = '/api/images/my-images';
const CANCEL = /^\/api\/jobs\/\d+\/cancel$/;
const START_BALANCE = 50;
const LIMIT = 4;
const TITLE = 'ImageGen Studio';

const ruPlural = (n: number, one: string, few: string, many: string) => {
  const form = new Intl.PluralRules('ru').select(n);
  return form === 'one' ? one : form === 'few' ? few : many;
};

const TEXT = {
  ru: {
    loading: 'Загружаем очередь…',
    failed: 'Не удалось загрузить очередь. Внутренняя ошибка сервера',
    retry: 'Повторить',
    empty: 'Заданий пока нет. Изображения и портреты, которые вы запустите, появятся здесь.',
    count: (n: number) => `В работе ${n} из ${LIMIT}`,
    open: (n: number) => `Очередь заданий, в работе: ${n}`,
    states: {
      queued: 'В очереди',
      running: 'Выполняется',
      completed: 'Готово',
      failed: 'Ошибка',
      cancelled: 'Отменено',
    },
    models: {
      ultra: 'Премиум-модель',
      core: 'FLUX.1',
      original: 'Original SD XL',
      sd3: 'Stable Diffusion 3.5',
    } as Record<string, string>,
    portrait: 'Портрет',
    position: (n: number) => `Место в очереди: ${n}`,
    eta: (s: number) => (s < 60 ? `Осталось ≈ ${s} с` : `Осталось ≈ ${Math.ceil(s / 60)} мин`),
    cancel: 'Отменить',
    cancelling: 'Отменяем…',
    cancelJob: (prompt: string) => `Отменить задание «${prompt}»`,
    openImage: (prompt: string) => `Открыть изображение «${prompt}»`,
    refused: { finished: 'Задание уже завершено, токены не возвращались', network: 'Ошибка сети' },
    providerFailed: { generation: 'Stability AI is overloaded', portrait: 'Не удалось создать портрет' },
    notify: {
      generation: (p: string) => `Изображение готово: «${p}»`,
      portrait: (p: string) => `Портрет готов: «${p}»`,
      failed: (p: string, reason: string) => `Задание не выполнено: «${p}». ${reason}`,
      link: 'Открыть изображение',
    },
    nav: { dashboard: 'AI-генератор', gallery: 'Ваша галерея' },
    close: 'Закрыть',
    reconnect: 'Переподключиться',
    refresh: 'Обновить очередь',
    tokens: (n: number) => `${n} ${ruPlural(n, 'токен', 'токена', 'токенов')}`,
  },
  en: {
    loading: 'Loading the queue…',
    failed: 'The queue could not be loaded. Internal server error',
    retry: 'Try again',
    empty: 'No jobs yet. Images and portraits you start appear here.',
    count: (n: number) => `${n} of ${LIMIT} in progress`,
    open: (n: number) => `Job queue, ${n} in progress`,
    states: { queued: 'Queued', running: 'Running', completed: 'Done', failed: 'Failed', cancelled: 'Cancelled' },
    models: {
      ultra: 'Premium model',
      core: 'FLUX.1',
      original: 'Original SD XL',
      sd3: 'Stable Diffusion 3.5',
    } as Record<string, string>,
    portrait: 'Portrait',
    position: (n: number) => `Place in line: ${n}`,
    eta: (s: number) => (s < 60 ? `About ${s} s left` : `About ${Math.ceil(s / 60)} min left`),
    cancel: 'Cancel',
    cancelling: 'Cancelling…',
    cancelJob: (prompt: string) => `Cancel the job “${prompt}”`,
    openImage: (prompt: string) => `Open the image “${prompt}”`,
    refused: { finished: 'This job has already finished; nothing was refunded', network: 'Network error occurred' },
    providerFailed: { generation: 'Stability AI is overloaded', portrait: 'Face-swap generation failed' },
    notify: {
      generation: (p: string) => `Your image is ready: “${p}”`,
      portrait: (p: string) => `Your portrait is ready: “${p}”`,
      failed: (p: string, reason: string) => `A job failed: “${p}”. ${reason}`,
      link: 'Open the image',
    },
    nav: { dashboard: 'AI Generator', gallery: 'Your Gallery' },
    close: 'Close',
    reconnect: 'Reconnect now',
    refresh: 'Refresh the queue',
    tokens: (n: number) => `${n} ${n === 1 ? 'token' : 'tokens'}`,
  },
};

// ---------------------------------------------------------------------------------------
// The server's side (the contract's shapes): three jobs in progress, two finished.

const at = (minute: number) => new Date(Date.UTC(2026, 10, 27, 10, minute)).toISOString();
const job = (fields: Partial<Job> & Pick<Job, 'id' | 'kind' | 'model' | 'prompt' | 'state' | 'cost'>): Job => ({
  position: null,
  etaSeconds: null,
  progress: 0,
  createdAt: at(0),
  startedAt: null,
  finishedAt: null,
  error: null,
  image: null,
  ...fields,
});
const imageOf = (id: number) => ({
  id: 500 + id,
  url: `http://localhost/images/job-${id}.png`,
  thumbnailUrl: `http://localhost/images/job-${id}.webp`,
});

const HARBOUR = job({
  id: 11,
  kind: 'generation',
  model: 'ultra',
  cost: 16,
  prompt: 'Misty harbour at dawn',
  state: 'running',
  progress: 0.4,
  etaSeconds: 9,
  createdAt: at(1),
  startedAt: at(1),
});
const KNIGHT = job({
  id: 12,
  kind: 'portrait',
  model: 'portrait',
  cost: 12,
  prompt: 'A knight in silver armour',
  state: 'queued',
  position: 1,
  etaSeconds: 40,
  createdAt: at(2),
});
const RAMEN = job({
  id: 13,
  kind: 'generation',
  model: 'core',
  cost: 6,
  prompt: 'A bowl of ramen, cinematic',
  state: 'queued',
  position: 2,
  etaSeconds: 75,
  createdAt: at(3),
});
const OWL = job({
  id: 9,
  kind: 'generation',
  model: 'original',
  cost: 2,
  prompt: 'Snowy owl portrait',
  state: 'completed',
  progress: 1,
  createdAt: at(0),
  startedAt: at(0),
  finishedAt: at(0),
  image: imageOf(9),
});
const DUNES = job({
  id: 8,
  kind: 'generation',
  model: 'sd3',
  cost: 12,
  prompt: 'Dunes under a red sky',
  state: 'failed',
  progress: 1,
  createdAt: at(0),
  finishedAt: at(0),
  error: { code: 'PROVIDER_ERROR', message: 'Stability AI is overloaded' },
});
/** GET /api/jobs as the page first reads it: active oldest first, then finished newest first. */
const FIRST_LIST: Job[] = [HARBOUR, KNIGHT, RAMEN, OWL, DUNES];
const ACTIVE_IDS = [HARBOUR.id, KNIGHT.id, RAMEN.id];

const finished = (j: Job) => j.state === 'completed' || j.state === 'failed' || j.state === 'cancelled';
const done = (j: Job, state: 'completed' | 'failed' | 'cancelled', minute: number): Job => ({
  ...j,
  state,
  position: null,
  etaSeconds: null,
  progress: state === 'cancelled' ? j.progress : 1,
  finishedAt: at(minute),
  image: state === 'completed' ? imageOf(j.id) : null,
  error: state === 'failed' ? { code: 'PROVIDER_ERROR', message: 'The portrait service timed out' } : null,
});

/** The order of SPEC's list, by hand: active by creation, then finished newest first. */
function byContract(jobs: Job[]): Job[] {
  const active = jobs.filter((j) => !finished(j)).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  const ended = jobs
    .filter(finished)
    .sort((a, b) => (b.finishedAt ?? '').localeCompare(a.finishedAt ?? '') || b.id - a.id);
  return [...active, ...ended];
}

/** The balance on the server: the charges stand, every failed or cancelled job of ours refunded. */
function serverBalance(jobs: Job[]): number {
  return (
    START_BALANCE +
    jobs
      .filter((j) => ACTIVE_IDS.includes(j.id) && (j.state === 'failed' || j.state === 'cancelled'))
      .reduce((sum, j) => sum + j.cost, 0)
  );
}

/**
 * What the server holds, given what the page knows: the page's jobs (every event and cancel is
 * the server's own word), a job whose cancel was refused as finished completed, and the places
 * in line counted again.
 */
function serverJobs(c: QueueContext): Job[] {
  if (c.perUserLimit === null) return FIRST_LIST;
  let place = 0;
  return byContract(
    c.jobs.map((j) => {
      const refused = c.cancels[j.id];
      if (refused?.status === 'failed' && refused.problem.code === 'JOB_FINISHED' && !finished(j))
        return done(j, 'completed', 30);
      return j;
    }),
  ).map((j) => (j.state === 'queued' ? { ...j, position: (place += 1) } : j));
}

const listReply = (jobs: Job[]): Reply =>
  json({ success: true, data: { jobs, perUserLimit: LIMIT } satisfies JobList });
const LIST_FAILED = apiError(500, 'INTERNAL', 'Internal server error');
const FINISHED_REFUSAL = apiError(409, 'JOB_FINISHED', 'This job has already finished; nothing was refunded');

// ---------------------------------------------------------------------------------------
// What the user has seen happen: the oracle the rows read.

interface Toast {
  message: string;
  link?: string;
}

interface Facts {
  list: 'loading' | 'failed' | 'ready';
  refreshing: boolean;
  jobs: Job[];
  cancels: Map<number, 'pending' | 'finished' | 'network'>;
  onDashboard: boolean;
  sheet: boolean;
  hidden: boolean;
  unseen: { completed: number; failed: number };
  balance: number;
  /** The notification the last step should have shown, if any, and one it should not have. */
  notified: Toast | null;
  quiet: Toast | null;
}

const isAnswer = (event: AnyEventObject) => event.type.startsWith('xstate.');

function notificationOf(j: Job, lang: Language): Toast {
  const text = TEXT[lang];
  if (j.state === 'completed') {
    return { message: text.notify[j.kind](j.prompt), link: j.image!.url };
  }
  return { message: text.notify.failed(j.prompt, text.providerFailed[j.kind]) };
}

function factsOf(events: readonly AnyEventObject[], lang: Language): Facts {
  const f: Facts = {
    list: 'loading',
    refreshing: false,
    jobs: [],
    cancels: new Map(),
    onDashboard: true,
    sheet: false,
    hidden: false,
    unseen: { completed: 0, failed: 0 },
    balance: START_BALANCE,
    notified: null,
    quiet: null,
  };
  const place = (j: Job) => {
    f.jobs = byContract([...f.jobs.filter((k) => k.id !== j.id), j]);
  };
  for (const event of events) {
    f.notified = null;
    f.quiet = null;
    const e = event as AnyEventObject & Record<string, unknown>;
    const refresh = () => {
      if (f.list === 'ready') f.refreshing = true;
    };
    switch (event.type) {
      case 'JOB.EVENT': {
        const { job: j, balance } = e.event as { job: Job; balance: number };
        const was = f.jobs.find((k) => k.id === j.id);
        const finishing = (j.state === 'completed' || j.state === 'failed') && (!was || !finished(was));
        place(j);
        f.balance = balance;
        refresh();
        if (finishing) {
          // Issue #28: out of sight (not on its screen, the sheet closed): a notification.
          const ownScreen = f.onDashboard && j.kind === 'generation';
          if (!ownScreen && !f.sheet) f.notified = notificationOf(j, lang);
          else f.quiet = notificationOf(j, lang);
          if (f.hidden) f.unseen[j.state === 'completed' ? 'completed' : 'failed'] += 1;
        }
        break;
      }
      case 'STREAM.CONNECTED':
      case 'JOBS.REFRESH':
        refresh();
        break;
      case 'JOBS.RETRY':
        f.list = 'loading';
        break;
      case 'JOB.CANCEL':
        f.cancels.set(e.id as number, 'pending');
        break;
      case 'CANCEL.DONE': {
        const reply = replyOf<Reply>(event).body as { data: { job: Job; balance: number } };
        f.cancels.delete(e.id as number);
        place(reply.data.job);
        f.balance = reply.data.balance;
        refresh();
        break;
      }
      case 'CANCEL.FAILED':
        f.cancels.set(e.id as number, e.via as 'finished' | 'network');
        refresh();
        break;
      case 'PANEL.OPEN':
        f.sheet = true;
        break;
      case 'PANEL.CLOSE':
        f.sheet = false;
        break;
      case 'SCREEN.ENTER':
        f.onDashboard = true;
        break;
      case 'SCREEN.LEAVE':
        f.onDashboard = false;
        break;
      case 'TAB.HIDDEN':
        f.hidden = true;
        break;
      case 'TAB.VISIBLE':
        f.hidden = false;
        f.unseen = { completed: 0, failed: 0 };
        break;
      default:
        if (isAnswer(event)) {
          const reply = replyOf<Reply>(event);
          if (reply.status === 500) f.list = 'failed';
          else {
            f.list = 'ready';
            f.refreshing = false;
            f.jobs = (reply.body as { data: JobList }).data.jobs;
          }
        }
    }
  }
  return f;
}

// ---------------------------------------------------------------------------------------
// The screen.

interface QueueUi extends OpenApp {
  writer: StreamWriter;
  /** Every notification that appeared, in order, and where the current step's begin. */
  toasts: Shown[];
  stepStart: number;
  observer: MutationObserver;
  nextEventId: number;
  visibility: 'visible' | 'hidden';
}

const tid = (id: string, root: ParentNode = document) => {
  const element = root.querySelector<HTMLElement>(`[data-testid="${id}"]`);
  if (!element) throw new Error(`no [data-testid="${id}"] on the screen`);
  return element;
};
const sheet = () => document.querySelector<HTMLElement>('[data-testid="queue-dialog"]');
const dashboardPanel = () => document.querySelector<HTMLElement>('[data-testid="queue-panel"]');
/** Where the jobs are on view: the dashboard's panel, else the open sheet. */
const queueOnView = () => sheet() ?? dashboardPanel();

function jobsShow(root: HTMLElement, f: Facts, lang: Language) {
  const text = TEXT[lang];
  const rows = [...root.querySelectorAll<HTMLElement>('[data-testid^="job-"][data-state]')];
  expect(rows.map((r) => r.getAttribute('data-testid'))).toEqual(f.jobs.map((j) => `job-${j.id}`));
  for (const [i, j] of f.jobs.entries()) {
    const row = rows[i]!;
    const active = !finished(j);
    expect(tid('job-model', row).textContent).toBe(j.kind === 'portrait' ? text.portrait : text.models[j.model]);
    expect(tid('job-state', row).textContent).toBe(text.states[j.state]);
    expect(tid('job-prompt', row).textContent).toBe(j.prompt);
    expect(row.querySelector('[data-testid="job-position"]')?.textContent ?? null).toBe(
      active && j.position !== null ? text.position(j.position) : null,
    );
    expect(row.querySelector('[data-testid="job-eta"]')?.textContent ?? null).toBe(
      active && j.etaSeconds !== null ? text.eta(j.etaSeconds) : null,
    );
    const bar = row.querySelector('[role="progressbar"]');
    expect(bar?.getAttribute('aria-valuenow') ?? null).toBe(active ? String(Math.round(j.progress * 100)) : null);
    expect(row.querySelector('[data-testid="job-error"]')?.textContent ?? null).toBe(
      j.state === 'failed' ? text.providerFailed[j.kind] : null,
    );
    const link = row.querySelector<HTMLAnchorElement>('[data-testid="job-image"]');
    expect(link?.getAttribute('href') ?? null).toBe(j.image?.url ?? null);
    if (link) {
      expect(link.getAttribute('aria-label')).toBe(text.openImage(j.prompt));
      expect(link.querySelector('img')!.getAttribute('src')).toBe(j.image!.thumbnailUrl);
    }
    // Cancel on active jobs: one click, disabled while it is being done, its failure under the job.
    const cancel = row.querySelector<HTMLButtonElement>('[data-testid="job-cancel"]');
    const state = f.cancels.get(j.id);
    if (!active) expect(cancel).toBeNull();
    else {
      expect(cancel!.disabled).toBe(state === 'pending');
      expect(cancel!.textContent).toBe(state === 'pending' ? text.cancelling : text.cancel);
      expect(cancel!.getAttribute('aria-label')).toBe(state === 'pending' ? text.cancelling : text.cancelJob(j.prompt));
    }
    expect(row.querySelector('[data-testid="job-cancel-error"]')?.textContent ?? null).toBe(
      state === 'finished' || state === 'network' ? text.refused[state] : null,
    );
  }
}

const active = (jobs: Job[]) => jobs.filter((j) => !finished(j)).length;

function everyState(ui: QueueUi, reached: Reached): Facts {
  const f = factsOf(reached.events, reached.lang);
  const text = TEXT[reached.lang];
  expect(f.sheet, 'the sheet as the chart has it').toBe(reached.matches({ panel: 'open' }));
  expect(f.hidden, 'the tab as the chart has it').toBe(reached.matches({ tab: 'hidden' }));
  expect(ui.location().split('?')[0]).toBe(f.onDashboard ? '/dashboard' : '/gallery');
  // The header: the count of jobs in progress (only once the list is known).
  const button = tid('queue-button');
  const count = f.list === 'ready' ? active(f.jobs) : 0;
  expect(button.getAttribute('aria-label')).toBe(text.open(count));
  expect(document.querySelector('[data-testid="queue-button-count"]')?.textContent ?? null).toBe(
    count > 0 ? String(count) : null,
  );
  expect(sheet() !== null).toBe(f.sheet);
  // The panel is on the dashboard (and the portrait creator), not on the gallery.
  expect(dashboardPanel() !== null).toBe(f.onDashboard);
  // Issue #28: a job finishing while the tab is hidden marks the title until the tab is seen.
  const n = f.unseen.completed + f.unseen.failed;
  expect(document.title).toBe(f.hidden && n > 0 ? `(${n}) ${f.unseen.failed > 0 ? '⚠' : '✓'} ${TITLE}` : TITLE);
  expect(tid('token-balance').textContent).toBe(text.tokens(f.balance));
  return f;
}

/** A notification as it appeared (the observer in `open` keeps every one, even those closed since). */
interface Shown {
  message: string;
  link: string | null;
  label: string | null;
}

function shownOf(element: HTMLElement): Shown {
  const link = element.querySelector('[data-testid="toast-link"]');
  const text = element.textContent ?? '';
  return {
    message: link ? text.replace(link.textContent ?? '', '') : text,
    link: link?.getAttribute('href') ?? null,
    label: link?.textContent ?? null,
  };
}

/** The notifications that appeared during the last step: the one due, and never one not due. */
function toastsShow(ui: QueueUi, f: Facts, lang: Language) {
  const shown = ui.toasts.slice(ui.stepStart);
  if (f.notified) {
    const found = shown.find((t) => t.message === f.notified!.message);
    expect(found, `the notification "${f.notified.message}"`).toBeDefined();
    expect(found!.link).toBe(f.notified.link ?? null);
    expect(found!.label).toBe(f.notified.link ? TEXT[lang].notify.link : null);
  }
  if (f.quiet) expect(shown.map((t) => t.message)).not.toContain(f.quiet.message);
}

const ctx = (snapshot: AnyMachineSnapshot) => snapshot.context as QueueContext;
const session = createActor(createMachine({})).start();

/** Sample events carry the frame the server writes (JOB.EVENT) or its HTTP answer. */
function jobEvent(c: QueueContext, next: Job) {
  const jobs = serverJobs(c).map((j) => (j.id === next.id ? next : j));
  return { type: 'JOB.EVENT', event: { job: next, balance: serverBalance(jobs) } };
}

export const model: ScreenModel<QueueUi> = {
  machine: queueMachine,
  input: { session },
  events: (snapshot: AnyMachineSnapshot) => {
    const c = ctx(snapshot);
    // The dashboard is open at the start: it says so as it mounts.
    if (c.screen === null && c.perUserLimit === null) return [{ type: 'SCREEN.ENTER', kind: 'generation' }];
    const list = (kind: string) =>
      answers(
        snapshot,
        'loadJobs',
        { output: { jobs: serverJobs(c), perUserLimit: LIMIT } },
        { ...listReply(serverJobs(c)), kind },
      );
    if (snapshot.matches({ list: 'loading' })) {
      return [
        ...list('list'),
        // The first read fails once at most.
        ...(c.problem === null
          ? answers(
              snapshot,
              'loadJobs',
              { error: new ApiError('Internal server error', 500, 'INTERNAL', LIST_FAILED.body) },
              LIST_FAILED,
            )
          : []),
      ];
    }
    if (snapshot.matches({ list: 'failed' })) return [{ type: 'JOBS.RETRY' }];
    const idle = snapshot.matches({ list: { ready: 'idle' } });
    const quiet = idle && snapshot.matches({ panel: 'closed' }) && snapshot.matches({ tab: 'visible' });
    const pending = Object.entries(c.cancels)
      .filter(([, s]) => s.status === 'pending')
      .map(([id]) => Number(id));
    const byId = (id: number) => c.jobs.find((j) => j.id === id)!;
    const harbour = byId(HARBOUR.id);
    const knight = byId(KNIGHT.id);
    const events: AnyEventObject[] = [];
    // The server's news, one job at a time (not about a job whose cancel is on its way).
    if (harbour.state === 'running' && !pending.includes(HARBOUR.id)) {
      events.push(jobEvent(c, done(harbour, 'completed', 10)));
    }
    if (!pending.includes(KNIGHT.id)) {
      if (knight.state === 'queued') {
        events.push(
          jobEvent(c, {
            ...knight,
            state: 'running',
            position: null,
            etaSeconds: 30,
            progress: 0.1,
            startedAt: at(11),
          }),
        );
      } else if (knight.state === 'running') {
        events.push(jobEvent(c, done(knight, 'completed', 12)), jobEvent(c, done(knight, 'failed', 12)));
      }
    }
    if (snapshot.matches({ list: { ready: 'refreshing' } })) events.push(...list('refresh'));
    // A cancel's answer: done (refunded), refused as finished (the running one), or no answer.
    for (const id of pending) {
      const j = byId(id);
      const cancelled = done(j, 'cancelled', 20);
      const balance = serverBalance(serverJobs(c).map((k) => (k.id === id ? cancelled : k)));
      events.push({
        type: 'CANCEL.DONE',
        id,
        job: cancelled,
        balance,
        reply: json({ success: true, data: { job: cancelled, balance } }),
      });
      if (j.state === 'running') {
        events.push({
          type: 'CANCEL.FAILED',
          id,
          via: 'finished',
          problem: { code: 'JOB_FINISHED', message: 'This job has already finished; nothing was refunded' },
          reply: FINISHED_REFUSAL,
        });
      } else {
        events.push({
          type: 'CANCEL.FAILED',
          id,
          via: 'network',
          problem: { code: 'NETWORK_ERROR', message: 'Network error occurred' },
        });
      }
    }
    if (quiet) {
      // Cancel from the dashboard's panel.
      const cancellable =
        c.screen === 'generation' ? c.jobs.filter((j) => !finished(j) && c.cancels[j.id]?.status !== 'pending') : [];
      events.push(
        ...cancellable.map((j) => ({ type: 'JOB.CANCEL', id: j.id })),
        { type: 'PANEL.OPEN' },
        { type: 'TAB.HIDDEN' },
        c.screen === 'generation'
          ? { type: 'SCREEN.LEAVE', kind: 'generation' }
          : { type: 'SCREEN.ENTER', kind: 'generation' },
      );
      // The dashboard's panel has the refresh button and shows the stream's Reconnect.
      if (c.screen === 'generation') events.push({ type: 'JOBS.REFRESH' }, { type: 'STREAM.CONNECTED' });
    }
    if (snapshot.matches({ panel: 'open' })) events.push({ type: 'PANEL.CLOSE' });
    if (snapshot.matches({ tab: 'hidden' })) events.push({ type: 'TAB.VISIBLE' });
    return events;
  },
  serializeState: (snapshot: AnyMachineSnapshot) => {
    const c = ctx(snapshot);
    return JSON.stringify([
      snapshot.value,
      c.jobs.map((j) => [j.id, j.state, j.position]),
      c.cancels,
      c.screen,
      c.unseen,
      c.perUserLimit !== null,
      c.problem !== null,
    ]);
  },
  edgeKey: (before: AnyMachineSnapshot, event: AnyEventObject, after: AnyMachineSnapshot) => {
    const type = event.type.replace(/^(xstate\.(done|error)\.actor)\..*$/, '$1');
    const e = event as AnyEventObject & { event?: { job: Job }; via?: string; id?: number };
    const j = e.event?.job;
    return JSON.stringify([
      before.value,
      type,
      // Which job changes how, and whether its own screen shows (a notification or not).
      j ? [j.kind, j.state, ctx(before).screen === j.kind] : null,
      e.via ?? null,
      event.type === 'JOB.CANCEL' || event.type === 'CANCEL.DONE'
        ? (ctx(before).jobs.find((k) => k.id === e.id)?.state ?? null)
        : null,
      after.value,
    ]);
  },
  maxSteps: 20,
  async open(lang: Language) {
    const api = new FakeApi()
      .hold('GET', JOBS)
      .hold('GET', EVENTS)
      .hold('POST', CANCEL)
      .fallback('GET', IMAGES, { body: { success: true, data: { images: [], pagination: NO_PAGES } } });
    document.title = TITLE;
    const ui = await openApp('/dashboard', { lang, api });
    const visibility = { state: 'visible' as 'visible' | 'hidden' };
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => visibility.state });
    // The stream opens first (its `ready` frame); the list is then read after it.
    const { writer } = await api.stream('GET', EVENTS);
    writer.raw('id: 100\nevent: ready\ndata: {}\n\n');
    await screen.findByTestId('queue-panel', {}, { timeout: 10_000 });
    // The notifications' code loads with the first one: loaded now, so that a notification the
    // queue must not show would be on screen as soon as its event is (see JOB.EVENT below).
    act(() => ui.app.actors.toasts.send({ type: 'TOAST.SHOW', kind: 'info', message: 'warm-up' }));
    await screen.findByText('warm-up', {}, { timeout: 10_000 });
    act(() => ui.app.actors.toasts.send({ type: 'TOAST.DISMISS', id: 1 }));
    await waitFor(() => expect(screen.queryByText('warm-up')).toBeNull());
    const toasts: Shown[] = [];
    const seen = new WeakSet<Element>();
    const observer = new MutationObserver(() => {
      for (const element of document.querySelectorAll<HTMLElement>('[data-kind]')) {
        if (seen.has(element)) continue;
        seen.add(element);
        toasts.push(shownOf(element));
      }
    });
    observer.observe(document.body, { childList: true, subtree: true });
    const queueUi = Object.assign(ui, { writer, nextEventId: 100, toasts, stepStart: 0, observer }) as QueueUi;
    Object.defineProperty(queueUi, 'visibility', {
      get: () => visibility.state,
      set: (value: 'visible' | 'hidden') => (visibility.state = value),
    });
    return queueUi;
  },
  close: (ui: QueueUi) => {
    ui.observer.disconnect();
    ui.close();
    delete (document as { visibilityState?: unknown }).visibilityState;
    document.title = '';
  },
  async perform(ui: QueueUi, event: AnyEventObject, before: AnyMachineSnapshot) {
    const { api, user } = ui;
    const text = TEXT[ui.lang];
    const e = event as AnyEventObject & Record<string, unknown>;
    const row = (id: number) => tid(`job-${id}`, queueOnView()!);
    ui.stepStart = ui.toasts.length;
    switch (event.type) {
      case 'SCREEN.ENTER':
        // At the start the dashboard is open already.
        if (ctx(before).perUserLimit === null) return;
        await user.click(screen.getByRole('link', { name: text.nav.dashboard }));
        await screen.findByTestId('queue-panel');
        return;
      case 'SCREEN.LEAVE':
        await user.click(screen.getByRole('link', { name: text.nav.gallery }));
        return;
      case 'JOB.EVENT': {
        ui.nextEventId += 1;
        ui.writer.raw(': ping\n\n');
        const { job: changed } = e.event as { job: Job };
        ui.writer.raw(`id: ${ui.nextEventId}\nevent: job\ndata: ${JSON.stringify(e.event)}\n\n`);
        // Where the jobs are on view, the event has arrived once its job shows it (and with it
        // any notification, which would be rendered in the same pass).
        const view = queueOnView();
        if (view)
          await waitFor(() => expect(tid(`job-${changed.id}`, view).getAttribute('data-state')).toBe(changed.state));
        return;
      }
      case 'STREAM.CONNECTED': {
        // The connection drops; Reconnect now; the server answers (it replays nothing new).
        ui.writer.fail();
        await user.click(await within(dashboardPanel()!).findByRole('button', { name: text.reconnect }));
        const { request, writer } = await api.stream('GET', EVENTS);
        expect(request.headers.get('Last-Event-ID')).toBe(String(ui.nextEventId));
        ui.writer = writer;
        return;
      }
      case 'JOBS.REFRESH':
        return user.click(within(dashboardPanel()!).getByRole('button', { name: text.refresh }));
      case 'JOBS.RETRY':
        return user.click(within(queueOnView()!).getByRole('button', { name: text.retry }));
      case 'JOB.CANCEL':
        return user.click(tid('job-cancel', row(e.id as number)));
      case 'CANCEL.DONE':
      case 'CANCEL.FAILED': {
        const path = `/api/jobs/${e.id as number}/cancel`;
        if (e.via === 'network') await api.breakConnection('POST', path);
        else await api.answer('POST', path, replyOf<Reply>(event));
        return;
      }
      case 'PANEL.OPEN':
        await user.click(tid('queue-button'));
        await screen.findByTestId('queue-dialog');
        return;
      case 'PANEL.CLOSE':
        return user.click(within(sheet()!).getByRole('button', { name: text.close }));
      case 'TAB.HIDDEN':
      case 'TAB.VISIBLE':
        ui.visibility = event.type === 'TAB.HIDDEN' ? 'hidden' : 'visible';
        await act(async () => {
          document.dispatchEvent(new Event('visibilitychange'));
        });
        return;
      default:
        await api.answer('GET', JOBS, replyOf<Reply>(event));
    }
  },
  sees: [
    [
      { list: 'loading' },
      {
        says: 'issue #28 item 3: the queue is being read',
        check: (ui: QueueUi, reached: Reached) => {
          const f = everyState(ui, reached);
          expect(f.list).toBe('loading');
          const root = queueOnView();
          if (root) {
            expect(tid('queue-loading', root).textContent).toBe(TEXT[reached.lang].loading);
            expect(root.querySelector('[data-testid="queue-jobs"]')).toBeNull();
          }
          expect(ui.api.isHeld('GET', JOBS)).toBe(true);
        },
      },
    ],
    [
      { list: 'failed' },
      {
        says: 'the queue could not be read: said so, with Try again',
        check: (ui: QueueUi, reached: Reached) => {
          const f = everyState(ui, reached);
          expect(f.list).toBe('failed');
          const failed = tid('queue-failed', queueOnView()!);
          expect(failed.getAttribute('role')).toBe('alert');
          expect(failed.textContent).toBe(`${TEXT[reached.lang].failed}${TEXT[reached.lang].retry}`);
        },
      },
    ],
    [
      { list: { ready: 'refreshing' } },
      {
        says: 'issue #28 items 3/4: an event or a cancel shows at once; the list is read again for the places and estimates',
        check: (ui: QueueUi, reached: Reached) => {
          const f = everyState(ui, reached);
          expect(f.list === 'ready' && f.refreshing).toBe(true);
          const root = queueOnView();
          if (root) jobsShow(root, f, reached.lang);
          expect(ui.api.isHeld('GET', JOBS), 'the list asked for again').toBe(true);
          toastsShow(ui, f, reached.lang);
        },
      },
    ],
    [
      { list: { ready: 'idle' } },
      {
        says: 'issue #28 item 3: model, prompt, state, progress, place in line, estimate, error, image link, Cancel; or the empty text',
        check: (ui: QueueUi, reached: Reached) => {
          const f = everyState(ui, reached);
          expect(f.list === 'ready' && !f.refreshing).toBe(true);
          const root = queueOnView();
          if (root) {
            jobsShow(root, f, reached.lang);
            expect(tid('queue-count', root).textContent).toBe(TEXT[reached.lang].count(active(f.jobs)));
          }
          toastsShow(ui, f, reached.lang);
        },
      },
    ],
  ],
  always: {
    says: 'nothing reaches a server the app does not call; each cancel asked once',
    check: (ui: QueueUi, reached: Reached) => {
      expect(ui.api.strays()).toEqual([]);
      const asked = reached.events
        .filter((e) => e.type === 'JOB.CANCEL')
        .map((e) => (e as unknown as { id: number }).id);
      expect(ui.api.sent('POST', CANCEL).map((r) => Number(r.path.split('/')[3]))).toEqual(asked);
    },
  },
};

describeScreenModel('job queue', model);

describeInvariants('job queue', model, [
  {
    name: 'the jobs in progress come first, oldest first, then the finished ones, newest first',
    state: (snapshot) => {
      const jobs = ctx(snapshot).jobs;
      return JSON.stringify(jobs.map((j) => j.id)) === JSON.stringify(byContract(jobs).map((j) => j.id));
    },
  },
  {
    name: 'a job has one cancel at a time: Cancel while one is on its way changes nothing',
    step: (before, event, after) =>
      event.type !== 'JOB.CANCEL' ||
      ctx(before).cancels[(event as unknown as { id: number }).id]?.status !== 'pending' ||
      JSON.stringify(before.context) === JSON.stringify(after.context),
  },
  {
    name: 'the title counts only jobs that finished while the tab was hidden, and is cleared when it is seen',
    state: (snapshot) =>
      snapshot.matches({ tab: 'hidden' }) || ctx(snapshot).unseen.completed + ctx(snapshot).unseen.failed === 0,
  },
  {
    name: 'every event shows its job at once, whatever the list is doing',
    step: (_before, event, after) =>
      event.type !== 'JOB.EVENT' ||
      ctx(after).jobs.some(
        (j) => JSON.stringify(j) === JSON.stringify((event as unknown as { event: { job: Job } }).event.job),
      ),
  },
]);

describe('job queue: the dashboard around it', () => {
  afterEach(() => cleanup());

  it.each(['ru', 'en'] as const)(
    '[%s] an image finished in the background joins the latest images; the first list reads nothing again',
    async (lang) => {
      const api = new FakeApi()
        .on('GET', JOBS, listReply(FIRST_LIST))
        .hold('GET', EVENTS)
        .on('GET', IMAGES, { body: { success: true, data: { images: [], pagination: NO_PAGES } } });
      const ui = await openApp('/dashboard', { lang, api });
      try {
        const { writer } = await api.stream('GET', EVENTS);
        writer.raw('id: 100\nevent: ready\ndata: {}\n\n');
        const panel = await screen.findByTestId('queue-panel', {}, { timeout: 10_000 });
        await waitFor(() => expect(tid(`job-${HARBOUR.id}`, panel).getAttribute('data-state')).toBe('running'));
        // The list, read after the stream opened, names an image finished before: no second read.
        await waitFor(() => expect(api.sent('GET', JOBS).filter((r) => !r.signal?.aborted).length).toBeGreaterThan(0));
        const read = api.sent('GET', IMAGES).length;
        const finishedNow = done(HARBOUR, 'completed', 10);
        writer.raw(`id: 101\nevent: job\ndata: ${JSON.stringify({ job: finishedNow, balance: 50 })}\n\n`);
        await waitFor(() => expect(tid(`job-${HARBOUR.id}`, panel).getAttribute('data-state')).toBe('completed'));
        await waitFor(() => expect(api.sent('GET', IMAGES).length).toBe(read + 1));
        expect(api.strays()).toEqual([]);
      } finally {
        ui.close();
      }
    },
  );
});
