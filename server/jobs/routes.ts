import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { jobIdParamsSchema, jobListSchema, jobSchema } from '../../src/domain/jobs';
import type { AuthService } from '../auth/service';
import { currentUser, requireUser } from '../auth/session';
import { ok } from '../http/schemas';
import type { JobQueue } from './queue';

/** The user's queue: the list, and Cancel (issue #28). The events come from GET /api/events. */
export function jobRoutes(app: FastifyInstance, deps: { auth: AuthService; jobs: JobQueue }): void {
  const { auth, jobs } = deps;
  const server = app.withTypeProvider<ZodTypeProvider>();
  const guard = { preValidation: requireUser(auth) };

  server.get(
    '/api/jobs',
    {
      ...guard,
      schema: {
        tags: ['Jobs'],
        summary: "The user's jobs in progress (oldest first), then the last day's finished ones (newest first)",
        response: { 200: ok(jobListSchema) },
      },
    },
    async (request) => ({ success: true as const, data: await jobs.list(currentUser(request).id) }),
  );

  server.post(
    '/api/jobs/:id/cancel',
    {
      ...guard,
      schema: {
        tags: ['Jobs'],
        summary: 'Cancel a job: refunded at once while in line, stopped at the provider and refunded while running',
        description: 'A finished job answers 409 JOB_FINISHED and nothing is refunded; another user’s answers 404.',
        params: jobIdParamsSchema,
        response: { 200: ok(z.object({ job: jobSchema, balance: z.number().int() })) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await jobs.cancel(currentUser(request).id, request.params.id),
    }),
  );
}
