import type { FastifyInstance } from 'fastify';
import type { AuthService } from '../auth/service';
import type { Config } from '../config';
import type { Db } from '../db/client';
import type { ChatSetup } from './models';
import { startChatReconciler } from './reconciler';
import { chatRoutes } from './routes';
import { ChatService } from './service';
import type { EventLog } from '../events/service';

/** The chat (SPEC section 7's /llm routes) and its reconciler of abandoned reservations. */
export function registerChat(
  server: FastifyInstance,
  deps: { config: Config; db: Db; auth: AuthService; setup: ChatSetup; events?: EventLog },
): ChatService {
  const { config } = deps;
  const chat = new ChatService(deps.db, deps.setup.engine, deps.setup.models, deps.events);
  chatRoutes(server, { config, auth: deps.auth, chat });
  startChatReconciler(server, chat, { intervalMs: config.CHAT_RECONCILE_INTERVAL_MS });
  return chat;
}
