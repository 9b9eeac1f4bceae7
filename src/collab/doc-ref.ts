/** A collaborative document: one Note of one owner, and its name as Hocuspocus knows it. */
export interface DocRef {
  ownerId: string;
  noteId: string;
}

export function docName(ref: DocRef): string {
  return `note/${ref.ownerId}/${ref.noteId}`;
}

export function parseDocName(name: string): DocRef | null {
  const m = /^note\/([^/]+)\/(.+)$/.exec(name);
  return m ? { ownerId: m[1]!, noteId: m[2]! } : null;
}
