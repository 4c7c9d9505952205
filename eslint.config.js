import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';

// Layers, innermost first. A file may import from its own layer and the ones before it only:
// lib ← model ← store ← events ← services ← http ← server ← cli.
const layers = ['lib', 'model', 'store', 'events', 'services', 'http', 'server.ts', 'cli'];
const layerZones = layers.flatMap((layer, index) =>
  layers.slice(index + 1).map((outer) => ({
    target: `./src/${layer}`,
    from: `./src/${outer}`,
    message: `src/${layer} must not import from src/${outer} (dependencies point inward)`,
  })),
);

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'data/', 'coverage/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { 'import-x': importX },
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', fetch: 'readonly', TextEncoder: 'readonly', structuredClone: 'readonly' } },
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: layerZones }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'error',
    },
  },
  {
    files: ['test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', 'no-console': 'off' },
  },
);
