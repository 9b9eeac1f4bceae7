/**
 * Note ids (docs/index.md, "Ids"): a frontmatter `id` owned by the earliest
 * claim among the notes carrying it, else the id derived from the path.
 * Sets `entry.id` on the note records (records.ts) as claims come and go.
 */
import { createHash } from 'node:crypto';
import { addToSortedMap, allOf, byPath, firstOf, removeFromSortedMap, type PathSet } from './links.js';
import type { NoteRec } from './records.js';

/**
 * The id of a note without a usable frontmatter `id`: `p` followed by the
 * first 16 hex digits (64 bits) of SHA-256 over the UTF-8 Home-relative path.
 * Stable for a path, URL-safe, 17 characters; it changes when the note moves.
 */
export function derivedId(path: string): string {
  return 'p' + createHash('sha256').update(path, 'utf8').digest('hex').slice(0, 16);
}

export class IdIndex {
  /** Frontmatter id → paths claiming it, earliest claim first (`byClaim`); the first owns it. */
  private readonly idClaims = new Map<string, PathSet>();
  /**
   * derivedId → path (whether or not that note uses it): a function of the
   * note map, so a snapshot's reading leaves it unmade (`deferDerived`) and
   * the first question by id makes it (10k notes: a map of 10k entries,
   * not needed to be ready).
   */
  private derivedIds: Map<string, string> | null = new Map();

  constructor(private readonly notesByPath: ReadonlyMap<string, NoteRec>) {}

  /** Leave the derived-id map unmade until asked (the index is being read from a snapshot). */
  deferDerived(): void {
    this.derivedIds = null;
  }

  /** A new note path (in the note map): its derived id now points to it. */
  addDerived(rec: NoteRec): void {
    this.derivedIds?.set(rec.derived, rec.entry.path);
  }

  /** A note path gone from the note map. */
  removeDerived(rec: NoteRec): void {
    this.derivedIds?.delete(rec.derived);
  }

  private derived(): Map<string, string> {
    if (this.derivedIds === null) {
      this.derivedIds = new Map();
      for (const rec of this.notesByPath.values()) this.derivedIds.set(rec.derived, rec.entry.path);
    }
    return this.derivedIds;
  }

  /** Register the claim of the note's frontmatter id (the note is in the note map) and set its `entry.id`. */
  claim(rec: NoteRec): void {
    const id = rec.claimId;
    rec.entry.id = rec.derived;
    if (id === null) return;
    const path = rec.entry.path;
    addToSortedMap(this.idClaims, id, path, this.byClaim);
    const claims = allOf(this.idClaims.get(id));
    if (claims[0] === path) {
      rec.entry.id = id;
      const prev = claims[1] !== undefined ? this.notesByPath.get(claims[1]) : undefined;
      if (prev !== undefined) prev.entry.id = prev.derived;
    }
  }

  /** Undo `claim`: the next claim, if any, owns the id. */
  release(rec: NoteRec): void {
    const id = rec.claimId;
    rec.entry.id = rec.derived;
    if (id === null) return;
    const i = removeFromSortedMap(this.idClaims, id, rec.entry.path, this.byClaim);
    if (i === 0) {
      const next = firstOf(this.idClaims.get(id));
      if (next !== undefined) this.notesByPath.get(next)!.entry.id = id;
    }
  }

  /** The note with this id (a frontmatter id's owner first, then derived ids). */
  noteById(id: string): NoteRec | undefined {
    const owner = firstOf(this.idClaims.get(id));
    if (owner !== undefined) return this.notesByPath.get(owner);
    const p = this.derived().get(id);
    if (p === undefined) return undefined;
    const rec = this.notesByPath.get(p);
    return rec !== undefined && rec.entry.id === id ? rec : undefined;
  }

  /** Claims on one id: the earliest first, then by path (both notes are in the note map while claiming). */
  private readonly byClaim = (a: string, b: string): number =>
    this.notesByPath.get(a)!.claimedAt - this.notesByPath.get(b)!.claimedAt || byPath(a, b);
}
