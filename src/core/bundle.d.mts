export interface BundleOptions {
  /** Where the bundle and its manifest are kept. */
  dir: string;
  /** Leave packages as imports (then `dir` must be inside the project). */
  packagesExternal?: boolean;
}

/** The bundle of `entryFile` (reused while its sources are unchanged), or null when esbuild is missing or fails. */
export function bundleEntry(entryFile: string, options: BundleOptions): string | null;

/** `bundleEntry` with each source module's own URL written in for `import.meta.url`. */
export function bundleEntryWithSourceUrls(entryFile: string, options: BundleOptions): Promise<string | null>;

/** Run a TypeScript file of this project as the program, from its bundle or through tsx. */
export function runTypeScript(entryFile: string): Promise<unknown>;
