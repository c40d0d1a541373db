import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { machineCatalogue } from '../../src/machines/catalogue';
import { statechartDocument, toMermaid } from '../../src/machines/mermaid';

describe('generated statechart diagrams', () => {
  it.each(Object.entries(machineCatalogue))('docs/statecharts/%s.md is up to date', (name, machine) => {
    const file = path.resolve('docs/statecharts', `${name}.md`);
    expect(fs.existsSync(file), `${file} is missing: run npm run statecharts`).toBe(true);
    expect(fs.readFileSync(file, 'utf8'), 'stale diagram: run npm run statecharts').toBe(
      statechartDocument(name, machine),
    );
  });

  it('highlights the active states', () => {
    const diagram = toMermaid(machineCatalogue.session!, ['session.authenticated', 'session.authenticated.idle']);
    expect(diagram).toContain('class authenticated_idle active');
  });
});
