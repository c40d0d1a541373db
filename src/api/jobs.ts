import { fromCallback, fromPromise } from 'xstate';
import { pathOf, type DataOf } from '../domain/api/contract';
import { eventStreamEndpoint } from '../domain/api/events';
import { cancelJobEndpoint, jobListEndpoint } from '../domain/api/jobs';
import { jobEventSchema, replyEventSchema, STREAM_EVENTS, type JobList } from '../domain/jobs';
import { createEventStreamReader, type SseFrame } from '../domain/sse';
import { jobStreamMachine, type ConnectInput, type JobStreamEvent } from '../machines/job-stream';
import { queueMachine, queueProblemOf, titleMark, type QueueEvent } from '../machines/queue';
import { API_BASE, authHeaders, call, notifyUnauthorized } from './client';

/*
 * Durable jobs (issue #28): the user's queue, Cancel, and the job events' stream, with the
 * queue and stream charts wired to them and to the page (its visibility and title).
 */

/** The active jobs oldest first, then the recent finished ones newest first. */
export function fetchJobs(signal?: AbortSignal): Promise<JobList> {
  return call(jobListEndpoint, signal ? { signal } : {});
}

export type CancelReply = DataOf<typeof cancelJobEndpoint>;

/** Cancel: the job as it is now and the balance after the refund. */
export function cancelJob(id: number, signal?: AbortSignal): Promise<CancelReply> {
  return call(cancelJobEndpoint, { params: { id }, ...(signal ? { signal } : {}) });
}

/**
 * Reads the user's event stream (fetch + ReadableStream, so it carries the bearer token and
 * can send Last-Event-ID, which EventSource cannot; its frames split by eventsource-parser,
 * createEventStreamReader): `job` frames carry a job and the balance, `reply`
 * frames a chat reply so far (issue #28 item 5); `ready` and every other frame only move the
 * id to resume from; comments (`: ping`) are skipped.
 * A 401 ends the session everywhere; any other failure, a broken connection or the end of
 * the body is reported for the chart to reconnect. Aborting the signal ends it quietly.
 */
export async function readJobStream(
  input: ConnectInput,
  signal: AbortSignal,
  sendBack: (event: JobStreamEvent) => void,
): Promise<void> {
  try {
    const response = await fetch(`${API_BASE}${pathOf(eventStreamEndpoint)}`, {
      credentials: 'include',
      headers: {
        accept: 'text/event-stream',
        ...authHeaders(),
        ...(input.lastEventId === null ? {} : { 'Last-Event-ID': input.lastEventId }),
      },
      signal,
    });
    if (response.status === 401) {
      notifyUnauthorized();
      return sendBack({ type: 'STREAM.UNAUTHORIZED' });
    }
    const reader = response.ok ? response.body?.getReader() : undefined;
    if (!reader) return sendBack({ type: 'STREAM.FAILED' });
    sendBack({ type: 'STREAM.OPENED' });
    const frames = createEventStreamReader();
    for (;;) {
      const { value, done } = await reader.read();
      for (const frame of done ? frames.end() : frames.push(value)) sendBack(streamEventOf(frame));
      if (done) break;
    }
    sendBack({ type: 'STREAM.FAILED' });
  } catch (error) {
    if (signal.aborted) return;
    console.warn('[jobs] the event stream broke', error);
    sendBack({ type: 'STREAM.FAILED' });
  }
}

/**
 * A frame as the chart hears it: a job's event, a chat reply's event, or (`ready`, an event
 * not read here, one whose data does not parse) only its id, which still counts, so a
 * reconnection resumes after it.
 */
function streamEventOf(frame: SseFrame): JobStreamEvent {
  const id = frame.lastEventId;
  if (frame.event === STREAM_EVENTS.job) {
    const parsed = jobEventSchema.safeParse(parseJson(frame.data));
    if (parsed.success) return { type: 'STREAM.EVENT', id, event: parsed.data };
    console.warn('[jobs] an event that is not a job event', frame.data);
  } else if (frame.event === STREAM_EVENTS.reply) {
    const parsed = replyEventSchema.safeParse(parseJson(frame.data));
    if (parsed.success) return { type: 'STREAM.REPLY', id, event: parsed.data };
    console.warn('[jobs] an event that is not a reply event', frame.data);
  }
  return { type: 'STREAM.READY', id };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export const liveJobStreamMachine = jobStreamMachine.provide({
  actors: {
    connect: fromCallback<JobStreamEvent, ConnectInput>(({ input, sendBack }) => {
      const controller = new AbortController();
      void readJobStream(input, controller.signal, sendBack);
      return () => controller.abort();
    }),
  },
});

/** The page title as the document had it before any mark. */
const MARK = /^\(\d+\) [✓⚠] /;
const unmarkedTitle = () => document.title.replace(MARK, '');

/** The queue chart wired to the API, the stream and the page; the shell adds the notifications. */
export const liveQueueMachine = queueMachine.provide({
  actors: {
    // A read stopped on purpose (the list is read again, React's development remount) never
    // settles: its rejection would otherwise reach the actor started again in its place.
    loadJobs: fromPromise<JobList>(async ({ signal }) => {
      try {
        return await fetchJobs(signal);
      } catch (error) {
        if (signal.aborted) return new Promise<never>(() => {});
        throw error;
      }
    }),
    cancelJob: fromCallback<QueueEvent, { id: number }>(({ input, sendBack }) => {
      const controller = new AbortController();
      cancelJob(input.id, controller.signal).then(
        (reply) => sendBack({ type: 'CANCEL.DONE', id: input.id, job: reply.job, balance: reply.balance }),
        (error: unknown) => {
          if (!controller.signal.aborted)
            sendBack({ type: 'CANCEL.FAILED', id: input.id, problem: queueProblemOf(error) });
        },
      );
      return () => controller.abort();
    }),
    jobStream: liveJobStreamMachine,
    watchVisibility: fromCallback<QueueEvent>(({ sendBack }) => {
      const tell = () => sendBack({ type: document.visibilityState === 'hidden' ? 'TAB.HIDDEN' : 'TAB.VISIBLE' });
      if (document.visibilityState === 'hidden') tell();
      document.addEventListener('visibilitychange', tell);
      return () => {
        document.removeEventListener('visibilitychange', tell);
        // Signed out or gone: no mark stays behind.
        document.title = unmarkedTitle();
      };
    }),
  },
  actions: {
    markTitle: (_, params) => {
      document.title = `${titleMark(params.unseen)}${unmarkedTitle()}`;
    },
    clearTitle: () => {
      document.title = unmarkedTitle();
    },
    logFailure: (_, params) => {
      console.warn(`[jobs] ${params.what} failed`, params.error);
    },
  },
});
