import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import globals from 'globals';

// Layers, innermost first. A file may import from its own layer and the ones before it only:
// lib ← model ← store ← events ← sandbox ← services ← runtime ← http ← server ← cli.
const layers = ['lib', 'model', 'store', 'events', 'sandbox', 'services', 'runtime', 'http', 'server.ts', 'cli'];
const layerZones = layers.flatMap((layer, index) =>
  layers.slice(index + 1).map((outer) => ({
    target: `./src/${layer}`,
    from: `./src/${outer}`,
    message: `src/${layer} must not import from src/${outer} (dependencies point inward)`,
  })),
);

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'data/', 'coverage/', 'bench/results/', '.scratch*'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { 'import-x': importX },
    languageOptions: { globals: globals.node },
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
