/**
 * TRUST_PROXY (server/config.ts) as Fastify's trustProxy. A hop count becomes a function:
 * Fastify takes a bare number as "trust nothing", so the count says itself which hops
 * are trusted: the connection's peer (hop 0) up to the n-th, the balancers. The client's
 * address is then the one the last balancer appended, whatever the client wrote further
 * left. A count trusts whoever connects, so it suits an app reachable only through its
 * balancers; otherwise list their addresses.
 */
export function trustProxyOption(
  value: false | number | string[],
): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof value === 'number') return value === 0 ? false : (_address, hop) => hop < value;
  return value;
}
