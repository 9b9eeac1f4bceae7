/**
 * dependency-cruiser configuration: `npx depcruise src` reports every import
 * cycle under src/ (test/architecture/no-cycles.test.ts runs the same check).
 * Type-only imports count: a type cycle ties the areas together just as much,
 * and it is how the big cycles start.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Areas depend downwards only (docs/architecture.md, "Layers"): shared types live below the areas that use them.',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.mts', '.js', '.mjs', '.json'] },
  },
};
