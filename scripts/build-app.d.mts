/** Builds the browser app for production into dist/ (scripts/build-app.mjs). */
export function buildBrowserApp(): void;
