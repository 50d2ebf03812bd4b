// The direction of imports (docs/architecture.md): entry points (cli, main) → the two servers
// (api, authserver) → the shared contract → platform (http, store, config, crypto). Checked by
// `npm test` (test/architecture.test.ts runs it; `npm run depcruise` runs it alone).
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles, type-only imports included.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'platform-imports-nothing-above',
      severity: 'error',
      comment: 'platform/ (http, store, config, crypto) is the bottom layer.',
      from: { path: '^src/platform/' },
      to: { path: '^src/(contract|api|authserver|admin|main|cli|webhooks)/' },
    },
    {
      name: 'contract-imports-only-platform',
      severity: 'error',
      comment: 'The shared contract sits between the servers and the platform.',
      from: { path: '^src/contract/' },
      to: { path: '^src/(api|authserver|admin|main|cli|webhooks)/' },
    },
    {
      name: 'servers-stay-apart',
      severity: 'error',
      comment: 'The resource server and the authorization server meet only in contract/ (they run apart with --role).',
      from: { path: '^src/(api|authserver)/' },
      to: { path: '^src/(api|authserver|admin|main|cli)/', pathNot: '^src/$1/' },
    },
    {
      name: 'admin-over-the-servers',
      severity: 'error',
      comment: 'The admin API and console use both servers (their models, never their stores) and are used by no one but main.',
      from: { path: '^src/admin/' },
      to: { path: '^src/(main|cli)/' },
    },
    {
      name: 'webhooks-over-the-contract',
      severity: 'error',
      comment: 'Webhooks (delivery of the outbox) stand beside the servers: they use the contract and the platform, and are used by admin, main and cli.',
      from: { path: '^src/webhooks/' },
      to: { path: '^src/(api|authserver|admin|main|cli)/' },
    },
    {
      name: 'only-the-top-uses-webhooks',
      severity: 'error',
      from: { path: '^src/(api|authserver|contract|platform)/' },
      to: { path: '^src/webhooks/' },
    },
    {
      name: 'webhooks-store-stays-in-webhooks',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/webhooks/' },
      to: { path: '^src/webhooks/store/' },
    },
    {
      name: 'main-below-cli',
      severity: 'error',
      comment: 'The composition root does not know the command line.',
      from: { path: '^src/main/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'sql-only-in-store-modules',
      severity: 'error',
      comment: 'Only store modules (a path with store/) speak SQL: Kysely and the store internals stay there.',
      from: { path: '^src/', pathNot: '/store/' },
      to: { path: ['^node_modules/kysely/', '^src/platform/store/sql\\.ts$'] },
    },
    {
      name: 'engines-behind-the-store',
      severity: 'error',
      comment: 'The SQLite and PostgreSQL modules are opened by open-store.ts only; the program sees the Store interface (store.ts).',
      from: { path: '^src/', pathNot: ['^src/platform/store/(open-store|sqlite[a-z-]*)\\.ts$', '\\.test\\.ts$'] },
      to: { path: '^src/platform/store/(sqlite|postgres|sqlite-statistics|sqlite-statements)\\.ts$' },
    },
    {
      name: 'api-store-stays-in-api',
      severity: 'error',
      comment: "The resource server's store modules (its tables) are imported only from inside api/.",
      from: { path: '^src/', pathNot: '^src/api/' },
      to: { path: '^src/api/store/' },
    },
    {
      name: 'authserver-store-stays-in-authserver',
      severity: 'error',
      comment: "The authorization server's store modules (its tables) are imported only from inside authserver/.",
      from: { path: '^src/', pathNot: '^src/authserver/' },
      to: { path: '^src/authserver/store/' },
    },
    {
      name: 'pages-only-through-the-html-kit',
      severity: 'error',
      comment: 'Pages are written and sent through platform/http/html/index.ts (template, layout, headers, sendPage), never its parts one by one; test/architecture.test.ts checks that no other module escapes HTML or answers text/html itself.',
      from: { path: '^src/', pathNot: '^src/platform/http/html/' },
      to: { path: '^src/platform/http/html/', pathNot: '^src/platform/http/html/index\\.ts$' },
    },
    {
      name: 'no-test-code-in-the-program',
      severity: 'error',
      from: { path: '^src/', pathNot: '\\.test\\.ts$' },
      to: { path: ['^test/', '\\.test\\.ts$'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
