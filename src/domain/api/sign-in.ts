/**
 * The path of the sign-in contract (`signInEndpoint`, src/domain/api/auth.ts), in a module of
 * its own without zod: the login page builds the sign-in address from it (src/api/base.ts)
 * and loads no schema (docs/architecture.md, "Loading the browser app").
 */
export const SIGN_IN_PATH = '/auth/google';
