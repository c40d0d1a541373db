import type { queueRu } from './queue.ru';

/** Texts of the job queue (issue #28), English. */
export const queueEn: typeof queueRu = {
  title: 'Job queue',
  open: 'Job queue, {{count}} in progress',
  close: 'Close',
  refresh: 'Refresh the queue',
  inProgress: '{{count}} of {{limit}} in progress',
  loading: 'Loading the queue…',
  failed: 'The queue could not be loaded.',
  retry: 'Try again',
  empty: 'No jobs yet. Images and portraits you start appear here.',
  states: {
    queued: 'Queued',
    running: 'Running',
    completed: 'Done',
    failed: 'Failed',
    cancelled: 'Cancelled',
  },
  portraitModel: 'Portrait',
  position: 'Place in line: {{position}}',
  etaSeconds: 'About {{count}} s left',
  etaMinutes: 'About {{count}} min left',
  progress: 'Progress of “{{prompt}}”',
  cancel: 'Cancel',
  cancelJob: 'Cancel the job “{{prompt}}”',
  cancelling: 'Cancelling…',
  openImage: 'Open the image “{{prompt}}”',
  stream: {
    connecting: 'Connecting to live updates…',
    open: 'Live updates on',
    waiting: 'Connection lost, reconnecting…',
    reconnect: 'Reconnect now',
  },
  notify: {
    generation: 'Your image is ready: “{{prompt}}”',
    portrait: 'Your portrait is ready: “{{prompt}}”',
    failed: 'A job failed: “{{prompt}}”. {{reason}}',
    link: 'Open the image',
  },
  background: {
    run: 'Run in background',
    hint: 'The job goes on on the server; follow it in the queue.',
  },
};
