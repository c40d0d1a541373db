// oidc-provider's own request context (it ships no types for its internals): the one
// AsyncLocalStorage its Koa stack runs every request in (lib/helpers/initialize_app.js).
declare module 'oidc-provider/lib/helpers/als.js' {
  import type { AsyncLocalStorage } from 'node:async_hooks';

  const context: AsyncLocalStorage<unknown>;
  export default context;
}
