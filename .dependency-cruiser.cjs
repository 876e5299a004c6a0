/**
 * Import rules checked by `npm run lint` (scripts/check-architecture.ts, which adds the
 * folder-cycle check). Layer order and reasons: docs/adr/0002-layers.md.
 */
// The pure core: scheduling vocabulary, API types, the packer, prediction and the
// disruption decisions (everything in src/disruption but the loop and its execution).
const pureCore = '^src/(scheduling|api|packing|prediction)/|^src/fleet/(shards|cluster-hold|presence)\\.ts$|^src/disruption/(?!disruptor\\.ts$|orchestration/)';
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'pure-core-no-io',
      comment: 'Decisions are pure functions over snapshots: no API client, HTTP server, file or network I/O (ADR 0002).',
      severity: 'error',
      from: { path: pureCore },
      to: { path: ['^src/(kube|server)/', '(^|/)node_modules/express/'] },
    },
    {
      name: 'pure-core-no-io-modules',
      comment: 'Decisions are pure functions over snapshots: no file or network modules (ADR 0002).',
      severity: 'error',
      from: { path: pureCore },
      to: { dependencyTypes: ['core'], path: '^(node:)?(fs|fs/promises|http|https|http2|net|tls|dgram|child_process)$' },
    },
    {
      name: 'pure-core-kube-types-only',
      comment: '@kubernetes/client-node is for its object types only in the pure core; the client lives in src/kube (ADR 0002).',
      severity: 'error',
      from: { path: pureCore },
      to: { path: '(^|/)node_modules/@kubernetes/client-node/', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
