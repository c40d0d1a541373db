/*
 * What the browser build imports as 'zod' (vite.config.ts aliases the bare name here):
 * zod itself, told before any schema exists to parse without compiling. zod compiles
 * object parsers with `new Function` unless told not to; the app's Content-Security-Policy
 * forbids eval, so the attempt would only fail and be reported as a policy violation in
 * the browser's console. Going through this module, the setting holds wherever zod is
 * loaded, in whichever chunk, without the entry having to load zod first.
 */
import { config } from 'zod/v4';

config({ jitless: true });

export * from 'zod/v4';
