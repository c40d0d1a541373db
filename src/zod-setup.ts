import { config } from 'zod';

// zod compiles object parsers with `new Function` unless told not to. The app's
// Content-Security-Policy forbids eval, so the attempt would only fail and be reported as
// a policy violation in the browser's console; parse without it. Imported first by main.tsx.
config({ jitless: true });
