/**
 * A module imported at its first use and then kept: later calls get it without another
 * `import()`. Node 20 resolves every `import()` anew (a stat of the file) even when the module
 * is already loaded, so once an upgrade in place has replaced the install (the bundle's chunks
 * are named by their hash), importing a module again fails however long ago it was loaded. The
 * preload of src/surfaces/deferred-modules.ts calls the same function, so a process that has
 * run a few seconds no longer needs those files (docs/performance.md, "Start-up").
 */
export function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () =>
    (loaded ??= load().catch((e: unknown) => {
      loaded = undefined;
      throw e;
    }));
}
