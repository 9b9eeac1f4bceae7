/** A failed DAV request: a `<d:error>` body naming the RFC's precondition, or a plain-text reason. */
export class DavError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly precondition?: { ns: string; name: string; inner?: string },
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const precondition = (status: number, ns: string, name: string, message: string, inner?: string) => new DavError(status, message, { ns, name, inner });
