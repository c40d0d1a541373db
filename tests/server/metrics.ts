import { expect } from 'vitest';

/** The scrape token the server suites start their apps with (METRICS_TOKEN). */
export const METRICS_TOKEN = 'metrics-token-for-tests';

/**
 * The samples of one metric from GET /metrics (Prometheus text), keyed by their label set
 * as the text writes it (`model="core",outcome="failed"`; '' for a metric without labels).
 */
export async function metricSamples(app: { url: string }, name: string): Promise<Record<string, number>> {
  const response = await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(response.status).toBe(200);
  const samples: Record<string, number> = {};
  for (const line of (await response.text()).split('\n')) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match?.[1] === name) samples[match[2] ?? ''] = Number(match[3]);
  }
  return samples;
}

/** What moved between two readings of metricSamples: each changed series and by how much. */
export function changes(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const changed: Record<string, number> = {};
  for (const [labels, value] of Object.entries(after)) {
    const delta = value - (before[labels] ?? 0);
    if (delta !== 0) changed[labels] = delta;
  }
  return changed;
}

/** Reads several metrics at once, and later what each moved by. */
export async function metricsWatch(app: { url: string }, names: string[]) {
  const read = async () => {
    const readings: Record<string, Record<string, number>> = {};
    for (const name of names) readings[name] = await metricSamples(app, name);
    return readings;
  };
  const before = await read();
  return {
    async moved(): Promise<Record<string, Record<string, number>>> {
      const after = await read();
      const out: Record<string, Record<string, number>> = {};
      for (const name of names) {
        const changed = changes(before[name]!, after[name]!);
        if (Object.keys(changed).length > 0) out[name] = changed;
      }
      return out;
    },
  };
}
