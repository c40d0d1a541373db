import { z } from 'zod';
import { jobIdParamsSchema, jobListSchema, jobSchema } from '../jobs';
import { CROSS_SITE, endpoint, ok, refusals, SIGNED_IN_REFUSALS } from './contract';

/** The user's queue (issue #28): the list and Cancel. The events come from GET /api/events. */

const tags = ['Jobs'];

export const jobListEndpoint = endpoint({
  method: 'GET',
  path: '/api/jobs',
  tags,
  summary: "The user's jobs in progress (oldest first), then the last day's finished ones (newest first)",
  replies: { 200: ok(jobListSchema), ...refusals(...SIGNED_IN_REFUSALS) },
});

export const cancelJobEndpoint = endpoint({
  method: 'POST',
  path: '/api/jobs/:id/cancel',
  tags,
  summary: 'Cancel a job: refunded at once while in line, stopped at the provider and refunded while running',
  description: 'A finished job answers 409 JOB_FINISHED and nothing is refunded; another user’s answers 404.',
  params: jobIdParamsSchema,
  replies: {
    200: ok(z.object({ job: jobSchema, balance: z.number().int().nonnegative() })),
    ...refusals(400, CROSS_SITE, 404, 409, ...SIGNED_IN_REFUSALS),
  },
});
