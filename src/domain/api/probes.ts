import { z } from 'zod';
import { endpoint, rawReply, refusals } from './contract';

/**
 * What balancers and monitoring ask: /healthz (the process and its database), /readyz
 * (everything an answer needs) and /metrics (Prometheus, behind METRICS_TOKEN). Never rate
 * limited, so none answers 429.
 */

const tags = ['Probes'];

const healthSchema = z.looseObject({
  status: z.enum(['ok', 'unavailable']),
  database: z.enum(['pglite', 'postgres']),
});

const readinessSchema = z.looseObject({
  status: z.enum(['ok', 'degraded', 'unavailable']),
  checks: z.record(z.string(), z.enum(['ok', 'unavailable'])).describe('database, storage and (with REDIS_URL) redis'),
});

export const healthEndpoint = endpoint({
  method: 'GET',
  path: '/healthz',
  tags,
  summary: 'Liveness: the process and its database',
  replies: { 200: healthSchema, 503: healthSchema },
});

export const readinessEndpoint = endpoint({
  method: 'GET',
  path: '/readyz',
  tags,
  summary: 'Readiness: the database, the image store and Redis',
  description: 'Redis unavailable answers 200 "degraded": requests are still served, without the shared rate limit.',
  replies: { 200: readinessSchema, 503: readinessSchema },
});

export const metricsEndpoint = endpoint({
  method: 'GET',
  path: '/metrics',
  tags,
  summary: 'Prometheus metrics; 404 without METRICS_TOKEN, else Authorization: Bearer METRICS_TOKEN',
  // 401: no token or another one; 404: metrics are off (no METRICS_TOKEN).
  replies: { 200: rawReply('text/plain', 'Prometheus text format'), ...refusals(401, 404, 500) },
});
