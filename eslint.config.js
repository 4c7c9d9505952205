import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

// Layers, innermost first. A file may import from its own layer and the ones before it only:
// lib ← model ← store ← events ← sandbox ← services ← runtime ← automation ← docs ← mcp ← project ←
// http ← server ← cli ← tui. (cli's `dynctl tui` command loads src/tui with a dynamic import, when it runs.)
const layers = ['lib', 'model', 'store', 'events', 'sandbox', 'services', 'runtime', 'automation', 'docs', 'mcp', 'project', 'http', 'server', 'cli', 'tui'];
const pattern = (layer) => (layer === 'server' ? '**/server.ts' : `**/${layer}/**`);
const layerRules = layers.slice(0, -1).map((layer, index) => ({
  files: [layer === 'server' ? 'src/server.ts' : `src/${layer}/**`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: layers.slice(index + 1).map((outer) => ({
          group: [pattern(outer)],
          message: `src/${layer} must not import from src/${outer} (dependencies point inward)`,
        })),
      },
    ],
  },
}));

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'data/', 'coverage/', 'bench/results/', '.scratch*', 'project/**', 'test/fixtures/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'error',
    },
  },
  ...layerRules,
  {
    // The web admin runs in the browser (built by admin/build.ts); it talks to the server over HTTP only.
    files: ['admin/src/**'],
    languageOptions: { globals: globals.browser },
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/src/*/**', '**/src/server.ts'], message: 'the admin uses the HTTP API only' }] }],
      // Responses are JSON shaped by the server; pages type what they read, not every envelope.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', 'no-console': 'off' },
  },
);
