/**
 * The `yaml` package, loaded at its first use: most frontmatter is read by the
 * linear fast path (src/markdown/simple-yaml.ts), and loading the package
 * (about 70 CommonJS files) costs a server's start tens of milliseconds
 * (docs/performance.md, "Start-up"). It is CommonJS under Node, so `require`
 * gives the same instance an `import` would.
 */
import { createRequire } from 'node:module';

type Yaml = typeof import('yaml');
let loaded: Yaml | undefined;

export function yaml(): Yaml {
  return (loaded ??= createRequire(import.meta.url)('yaml') as Yaml);
}
