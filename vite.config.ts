import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { gzipAsync } from '@gfx/zopfli';
import tailwindcss from '@tailwindcss/vite';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';
import { API_PREFIXES } from './src/domain/api/prefixes';

const apiTarget = `http://localhost:${process.env.API_PORT ?? '3001'}`;

/** The libraries every page runs (src/main.tsx and the login page or the app). */
const vendorPackages = ['react', 'react-dom', 'scheduler', 'xstate', '@xstate', 'i18next', 'use-sync-external-store'];

/** The app's own modules of src/main.tsx and of the login page (see the 'core' group). */
const coreModules = new RegExp(
  [
    String.raw`src[\/]login-page\.tsx`,
    String.raw`src[\/]api[\/](?:base|signed-out-session)\.ts`,
    String.raw`src[\/]machines[\/](?:session|live-actors)\.ts`,
    String.raw`src[\/]domain[\/](?:routes|redirect|session-hint|toast)\.ts`,
    String.raw`src[\/]i18n[\/](?:index|locales[\/]common\.ru)\.ts`,
    String.raw`src[\/]ui[\/](?:app-context|login[\/]LoginScreen|common[\/]LanguageSwitcher)\.tsx`,
    // lucide's own code and the login screen's icons; the others come with their screens.
    String.raw`node_modules[\/]lucide-react[\/]dist[\/]esm[\/](?!icons[\/])`,
    String.raw`node_modules[\/]lucide-react[\/]dist[\/]esm[\/]icons[\/](?:wand-sparkles|palette|image|sparkles|globe)\.mjs`,
  ].join('|'),
);

/** The app's frame beyond the login page (see the 'app' group). */
const appModules = new RegExp(
  [
    String.raw`node_modules[\/]@tanstack[\/]`,
    String.raw`src[\/]app\.tsx`,
    String.raw`src[\/]ui[\/](?:router|shell[\/]\w+|common[\/](?:Deferred|Spinner|ErrorFallback))\.tsx?`,
    String.raw`src[\/]i18n[\/](?:texts\.ru|locales[\/]\w+\.ru|format)\.ts`,
  ].join('|'),
);

/** Radix with what it brings, and lucide's icons (see the 'kit' group). */
const kitModules = new RegExp(
  String.raw`node_modules[\/](?:@radix-ui|radix-ui|lucide-react|@floating-ui|react-remove-scroll|react-remove-scroll-bar|react-style-singleton|use-callback-ref|use-sidecar|aria-hidden|detect-node-es|get-nonce|tslib)[\/]`,
);

/** Where a production build keeps its source maps: beside dist/, never served. */
export const SOURCE_MAP_DIR = 'dist-sourcemaps';

const brotli = promisify(zlib.brotliCompress);
const TEXT_FILE = /\.(?:js|mjs|css|html|svg|json|txt|xml|webmanifest)$/;

/**
 * Production builds: every text file of dist/ gets a brotli (.br) and a gzip (.gz, by
 * Zopfli) copy, made once here at the highest levels, which the server sends to browsers that accept
 * them (@fastify/static's preCompressed); a copy that saves nothing is not written. The
 * source maps (hidden: no sourceMappingURL comment) move out of dist/ to SOURCE_MAP_DIR,
 * so they are kept for reading error reports but never served.
 */
function buildOutputs(): Plugin {
  let outDir = 'dist';
  let root = process.cwd();
  return {
    name: 'imagegen:build-outputs',
    apply: 'build',
    configResolved(config) {
      root = config.root;
      outDir = path.resolve(config.root, config.build.outDir);
    },
    async closeBundle() {
      const mapDir = path.resolve(root, SOURCE_MAP_DIR);
      await fs.rm(mapDir, { recursive: true, force: true });
      const files = (await fs.readdir(outDir, { recursive: true })).map((file) => path.join(outDir, file));
      await Promise.all(
        files.map(async (file) => {
          if (file.endsWith('.map')) {
            const target = path.join(mapDir, path.relative(outDir, file));
            await fs.mkdir(path.dirname(target), { recursive: true });
            await fs.rename(file, target);
            return;
          }
          if (!TEXT_FILE.test(file) || file.includes(`${path.sep}.vite${path.sep}`)) return;
          const content = await fs.readFile(file);
          const [br, gz] = await Promise.all([
            brotli(content, {
              params: {
                [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY,
                [zlib.constants.BROTLI_PARAM_SIZE_HINT]: content.length,
              },
            }),
            // Zopfli: standard gzip that any browser reads, 3-5% smaller than zlib's best.
            gzipAsync(content, { numiterations: 15 }),
          ]);
          if (br.length < content.length) await fs.writeFile(`${file}.br`, br);
          if (gz.length < content.length) await fs.writeFile(`${file}.gz`, gz);
        }),
      );
    },
  };
}

export default defineConfig({
  plugins: [react(), tailwindcss(), buildOutputs()],
  resolve: {
    // Every browser import of zod goes through src/zod-setup.ts, which configures it first.
    alias: [
      { find: /^zod$/, replacement: path.resolve(import.meta.dirname, 'src/zod-setup.ts') },
      // React 19 has useSyncExternalStore itself: @xstate/react's shims only add weight.
      { find: /^use-sync-external-store\/shim\/with-selector$/, replacement: 'use-sync-external-store/with-selector' },
      { find: /^use-sync-external-store\/shim$/, replacement: 'use-sync-external-store' },
    ],
  },
  server: {
    port: 5173,
    proxy: Object.fromEntries(API_PREFIXES.map((prefix) => [prefix, { target: apiTarget, changeOrigin: false }])),
  },
  build: {
    outDir: 'dist',
    sourcemap: 'hidden',
    // .vite/manifest.json: which chunks each screen needs, for the server's preload links
    // (server/http/pages.ts); never served.
    manifest: true,
    chunkSizeWarningLimit: 1500,
    // Browsers without <link rel=modulepreload> (Safari before 17) load the same modules
    // when they are imported; the polyfill would cost every page its bytes.
    modulePreload: { polyfill: false },
    rolldownOptions: {
      output: {
        codeSplitting: {
          groups: [
            {
              // The libraries every page runs, in one long-cached file. zod is not one of
              // them: the first screen needs no schema, and the screens load it themselves.
              name: 'vendor',
              test: new RegExp(`node_modules[\\/](${vendorPackages.join('|')})[\\/]`),
              priority: 100,
            },
            {
              // What the login page runs besides the libraries, in one file rather than a
              // dozen small ones (each costs a phone a request): the session statechart,
              // the common Russian texts, the login screen and its icons.
              name: 'core',
              test: coreModules,
              priority: 90,
            },
            {
              // The app around the screens: the router, the shell, every Russian text and the
              // number and date formatters.
              name: 'app',
              test: appModules,
              priority: 80,
            },
            {
              // What the screens share: the API calls, the domain rules and zod.
              name: 'data',
              test: /node_modules[\\/](?:zod|wretch)[\\/]|src[\\/](?:zod-setup\.ts|api[\\/]|domain[\\/])/,
              priority: 70,
            },
            {
              // The component kit the screens share: Radix and its helpers, and the icons.
              name: 'kit',
              test: kitModules,
              priority: 60,
            },
          ],
        },
      },
    },
  },
});
