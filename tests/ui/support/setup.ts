import { cleanup } from '@testing-library/react';
import { afterEach } from 'vitest';

// Testing Library unmounts after each test by itself only with vitest's globals, which this
// project does not use: a screen left mounted would keep React working after jsdom is gone.
// The tab's storage (drafts kept through a sign-in) and the stored language start empty for
// every test: the files of a worker share one page (the ui project does not isolate them).
afterEach(() => {
  cleanup();
  sessionStorage.clear();
  localStorage.clear();
});
