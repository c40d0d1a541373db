import { z } from 'zod';
import { jobEventSchema } from '../jobs';
import { endpoint, rawReply, refusals, SIGNED_IN_REFUSALS } from './contract';

/** The user's events (issue #28): jobs as they change and chat replies written elsewhere, as server-sent events. */

export const eventStreamEndpoint = endpoint({
  method: 'GET',
  path: '/api/events',
  tags: ['Jobs'],
  summary: "The user's events (jobs as they change) as server-sent events; resumes after Last-Event-ID",
  description: 'The id to resume after comes in the Last-Event-ID header, or as `lastEventId` in the query.',
  query: z.object({ lastEventId: z.string().max(20).optional() }),
  replies: {
    200: rawReply(
      'text/event-stream',
      '`id: <n>`, `event: job`, `data: <json>` with the schema given here; a stream opened without ' +
        'Last-Event-ID starts with `event: ready` whose id is the newest so far',
      jobEventSchema,
    ),
    ...refusals(400, ...SIGNED_IN_REFUSALS),
  },
});
