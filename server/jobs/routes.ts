import type { FastifyInstance } from 'fastify';
import { cancelJobEndpoint, jobListEndpoint } from '../../src/domain/api/jobs';
import type { AuthService } from '../auth/service';
import { currentUser, requireUser } from '../auth/session';
import { route } from '../http/contract-route';
import type { JobQueue } from './queue';

/** The user's queue: the list, and Cancel (issue #28). The events come from GET /api/events. */
export function jobRoutes(server: FastifyInstance, deps: { auth: AuthService; jobs: JobQueue }): void {
  const { auth, jobs } = deps;
  const guard = { preValidation: requireUser(auth) };

  route(server, jobListEndpoint, guard, async (request) => ({
    success: true as const,
    data: await jobs.list(currentUser(request).id),
  }));

  route(server, cancelJobEndpoint, guard, async (request) => ({
    success: true as const,
    data: await jobs.cancel(currentUser(request).id, request.params.id),
  }));
}
