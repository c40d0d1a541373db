import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['.local/', '.build/', 'dist/', 'node_modules/', 'data/', 'server/db/migrations/', 'docs/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: { ...globals.browser, ...globals.node },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/only-throw-error': 'off',
      // Fastify hooks and handlers are async by contract, with or without an await.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
      'no-console': ['error', { allow: ['warn', 'error', 'log'] }],
    },
  },
  // Plain JavaScript run by Node itself (scripts/start.mjs): outside the TypeScript project.
  { files: ['**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  {
    files: ['src/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: { ...reactHooks.configs.recommended.rules },
  },
  {
    // Views render state and send events: network calls belong to src/api actors, and a view
    // takes from src/api only those actors (live…Machine), the stored values an actor starts
    // from (stored…: the chosen chat model, a held draft) and the wording of problems
    // (api/error-text.ts).
    files: ['src/ui/**/*.{ts,tsx}', 'src/machines/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'wretch', message: 'Do I/O in src/api and inject it into machines.' }],
          patterns: [
            {
              regex: '(^|/)api/(?!error-text$)[^/]+$',
              allowImportNamePattern: '^(live[A-Z]\\w*Machine|stored[A-Z]\\w*)$',
              allowTypeImports: true,
              message: 'A view takes the actors src/api provides (live…Machine), not its requests or client.',
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', { name: 'fetch', message: 'Do I/O in src/api and inject it into machines.' }],
    },
  },
  {
    // #27: the layers' boundaries and no import cycles, checked rather than kept by habit.
    // Type-only imports do not count as a cycle (they leave nothing at run time).
    files: ['src/**/*.{ts,tsx}', 'server/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver()],
      // Without these the plugin reads no TypeScript module it resolves, and sees no cycle.
      'import-x/extensions': ['.ts', '.tsx', '.js', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            {
              target: './src/domain',
              from: './src',
              except: ['./domain'],
              message: 'src/domain imports nothing of ours: it is the rules, shared by every layer.',
            },
            { target: './src/domain', from: './server', message: 'src/domain imports nothing of ours.' },
            {
              target: './src/machines',
              from: './src',
              except: ['./domain', './machines'],
              message: 'src/machines import only src/domain: the app provides their I/O (src/api).',
            },
            { target: './src/machines', from: './server', message: 'src/machines import only src/domain.' },
          ],
        },
      ],
    },
  },
  {
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['node:*', 'react', 'react-dom'], message: 'src/domain is isomorphic.' }] },
      ],
    },
  },
  {
    // The database is reached through repositories: queries live in server/**/*repository.ts
    // and server/db, so services and routes never build SQL themselves.
    files: ['server/**/*.ts'],
    ignores: ['server/**/*repository.ts', 'server/db/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['drizzle-orm', 'drizzle-orm/*'],
              message: 'Query the database in a repository (server/**/repository.ts).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
