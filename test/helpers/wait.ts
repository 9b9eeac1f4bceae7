/** Polls until `check` returns a truthy value (or stops throwing), or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 5000, everyMs = 25): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
      last = new Error('condition still false');
    } catch (e) {
      last = e;
    }
    if (Date.now() > until) throw last;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
