import { cleanup } from '@testing-library/react';
import { afterEach } from 'vitest';

// Testing Library unmounts after each test by itself only with vitest's globals, which this
// project does not use: a screen left mounted would keep React working after jsdom is gone.
// The tab's storage (drafts kept through a sign-in) starts empty for every test.
afterEach(() => {
  cleanup();
  sessionStorage.clear();
});
