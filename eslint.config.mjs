// Lint rules for the whole tree (`npm run lint`). Layout is prettier's (.prettierrc.json); the layer rule is
// dependency-cruiser's (.dependency-cruiser.cjs).
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

const nodeGlobals = Object.fromEntries(
  [
    'process',
    'console',
    'Buffer',
    'URL',
    'AbortController',
    'setTimeout',
    'clearTimeout',
    'setInterval',
    'clearInterval',
    'setImmediate',
    'fetch',
    'globalThis',
  ].map((name) => [name, 'readonly']),
)
const commonJsGlobals = { require: 'readonly', module: 'writable', exports: 'writable', __dirname: 'readonly', __filename: 'readonly' }

export default tseslint.config(
  { ignores: ['dist/', 'coverage/', '.cache/', '.pgdata/', 'compat-tests/.kafka/', 'docs/api/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: nodeGlobals },
    rules: {
      // `_name` marks a value that is there for its position (a destructured rest, a callback's signature)
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      '@typescript-eslint/no-unused-expressions': ['error', { allowShortCircuit: true, allowTernary: true }],
      // identifier and subject checks match control characters on purpose
      'no-control-regex': 'off',
    },
  },
  {
    files: ['**/*.cjs', '**/*.cts', 'compat-tests/frameworks/indirect-cjs/**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: { ...nodeGlobals, ...commonJsGlobals } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // tests poke at values the public types do not describe (KafkaJS internals, error shapes)
    files: ['test/**', 'compat-tests/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
)
