/**
 * Section 4.2 of the spec: tags. Handlers call assignments.ts; the rewrite actions call
 * rewrite.ts, loaded at the first call through lazy.ts (docs/tags-rewrite.md).
 */
import { Type } from '@sinclair/typebox';
import { Obj, PathString, specAction } from '../actions/spec.js';
import { openScope } from '../notes/access.js';
import { onFirstUse } from '../core/first-use.js';
import * as t from './assignments.js';

/** The tag rewrites (./lazy.ts), imported by the first rewrite action that runs, then kept (core/first-use.ts). */
export const tagRewriteCode = onFirstUse(() => import('./lazy.js'));
const rw = async () => (await tagRewriteCode()).rewrite;

const RewriteId = Obj({ id: PathString('ID of the tag update') });
const Cursor = Type.Optional(Type.Integer({ minimum: 0, description: 'The `next_cursor` of the previous page, unchanged' }));
const Limit = Type.Optional(Type.Integer({ minimum: 0, description: 'Page size; reduce it after an overflow' }));

/** The body of `preview_rename`, which `rename_tag` and `start_rewrite` take as well. */
const RenameBody = Obj({
  confirmed: Type.Optional(Type.Boolean({ description: 'Confirms a rename the preview warned about' })),
  new_tag: Type.String({ description: 'The new tag name' }),
  old_tag: Type.String({ description: 'The tag to rename' }),
});

export const actions = [
  specAction('assign_tags', {
    summary: 'Sets the tags of one file in the Home, replacing its current tag assignment.',
    input: {
      body: Obj({
        path: Type.String({ description: 'Home-relative path of the file' }),
        tags: Type.Array(Type.String(), { description: 'The complete list of tags for the file' }),
      }),
    },
    handler: async (ctx, { body }) => t.assignTags(await openScope(ctx), body.path, body.tags),
  }),
  specAction('get_file_assignment', {
    summary: 'Reads the tags assigned to one file in the Home.',
    input: { path: Obj({ path: PathString('Home-relative path of the file (URL-encoded in the route)') }) },
    handler: async (ctx, { path }) => t.getFileAssignment(await openScope(ctx), path.path),
  }),
  specAction('list_file_assignments', {
    summary: 'Lists the tag assignments of files, optionally below one folder, one page at a time. Pass `next_cursor` unchanged; reduce `limit` after an overflow.',
    input: {
      query: Obj({ cursor: Cursor, folder: Type.Optional(Type.String({ description: 'Home-relative folder to list below' })), limit: Limit }),
    },
    handler: async (ctx, { query }) => t.listFileAssignments(await openScope(ctx), query),
  }),
  specAction('list_tags', {
    summary: "Lists the tags used in the caller's Home.",
    handler: async (ctx) => t.listTags(await openScope(ctx)),
  }),
  specAction('preview_rename', {
    summary: 'Previews renaming tag `old_tag` to `new_tag` without changing any file.',
    input: { body: RenameBody },
    handler: async (ctx, { body }) => (await rw()).previewRename(ctx, body),
  }),
  specAction('rename_tag', {
    summary: 'Renames tag `old_tag` to `new_tag` in every file that uses it; takes the same body as `preview_rename`.',
    input: { body: RenameBody },
    handler: async (ctx, { body }) => (await rw()).renameTag(ctx, body),
  }),
  specAction('rewrite_status', {
    summary: 'Shows the progress of a tag update started by `start_rewrite`.',
    input: { path: RewriteId },
    handler: async (ctx, { path }) => (await rw()).rewriteStatus(ctx, path.id),
  }),
  specAction('start_rewrite', {
    summary: 'Starts a tag update that renames `old_tag` to `new_tag` in the background; takes the same body as `preview_rename`. Follow it with `rewrite_status`.',
    input: { body: RenameBody },
    handler: async (ctx, { body }) => (await rw()).startRewrite(ctx, body),
  }),
  specAction('tag_page', {
    summary: 'Lists the items tagged with one tag, one page at a time. Pass `next_cursor` unchanged.',
    input: { path: Obj({ tag: PathString() }), query: Obj({ cursor: Cursor, limit: Limit }) },
    handler: async (ctx, { path, query }) => t.tagPage(await openScope(ctx), path.tag, query.cursor, query.limit),
  }),
  specAction('tags_reconcile', {
    summary: "Reconciles the tag index with the files in the caller's Home.",
    handler: async (ctx) => (await rw()).reconcileTags(ctx),
  }),
  specAction('undo_rewrite', {
    summary: 'Undoes a tag update started by `start_rewrite`.',
    input: { path: RewriteId },
    handler: async (ctx, { path }) => (await rw()).undoRewrite(ctx, path.id),
  }),
];
