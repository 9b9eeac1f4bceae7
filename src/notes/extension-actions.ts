/**
 * Notes-area actions this project adds beyond the spec's table (the spec
 * says the area has 22 actions it does not show). Each is marked
 * `extension: true` and documented in docs/notes-api.md.
 */
import { Type } from '@sinclair/typebox';
import { defineAction } from '../actions/types.js';
import { Headers, Obj, PathString } from '../actions/spec.js';
import { openScope } from './access.js';
import { deleteFile, listFolder, readFile, writeFile } from './files.js';
import { searchReply } from './note-list.js';
import { deleteNote, searchNotes, updateNote } from './notes.js';

const AREA = 'Notes, links and canvas';
const base = {
  surfaces: ['cli', 'mcp', 'webmcp'] as ('cli' | 'mcp' | 'webmcp')[],
  scopes: ['data'] as 'data'[],
  requestEncoding: 'none' as const,
  responseEncoding: 'json' as const,
  recentConfirmation: false,
  area: AREA,
  extension: true,
};
const NoteId = Obj({ id: PathString('Stable ID of the Note') });
const IfMatch = Headers({ 'if-match': Type.String({ description: 'Current ETag of the file (from get_note or the ETag header)' }) });
const HomePath = Type.String({ minLength: 1, description: 'Home-relative path, e.g. Notes/Ideas.md' });

export const extensionActions = [
  defineAction({
    ...base,
    name: 'notes_update',
    method: 'PUT',
    route: '/api/v1/notes/{id}',
    tool: 'svc_api_notes_update',
    effect: 'destructive',
    requestEncoding: 'json',
    summary:
      'Updates a Note at its current ETag (If-Match): replaces the body, and sets title, tags or other frontmatter keys (null removes a key). Bytes outside the edited parts stay as they were.',
    input: {
      path: NoteId,
      headers: IfMatch,
      body: Obj({
        body: Type.Optional(Type.String({ description: 'New body (everything after the frontmatter)' })),
        title: Type.Optional(Type.String({ minLength: 1 })),
        tags: Type.Optional(Type.Array(Type.String())),
        frontmatter: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Keys to set; null removes a key' })),
      }),
    },
    handler: async (ctx, { path, headers, body }) => updateNote(await openScope(ctx), path.id, headers['if-match'], body),
  }),
  defineAction({
    ...base,
    name: 'notes_delete',
    method: 'DELETE',
    route: '/api/v1/notes/{id}',
    tool: 'svc_api_notes_delete',
    effect: 'destructive',
    summary: 'Deletes a Note at its current ETag (If-Match).',
    input: { path: NoteId, headers: IfMatch },
    handler: async (ctx, { path, headers }) => deleteNote(await openScope(ctx), path.id, headers['if-match']),
  }),
  defineAction({
    ...base,
    name: 'notes_search',
    method: 'GET',
    route: '/api/v1/notes/search',
    tool: 'svc_api_notes_search',
    effect: 'read',
    summary: 'Full-text search over titles, bodies, tags and aliases (prefix and fuzzy matching), optionally within a path prefix or a tag.',
    input: {
      query: Obj({
        q: Type.String({ minLength: 1, description: 'Search text' }),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
        path: Type.Optional(Type.String({ description: 'Only notes under this path prefix' })),
        tag: Type.Optional(Type.String({ description: 'Only notes with this tag (or a nested one)' })),
      }),
    },
    handler: async (ctx, { query }) => searchReply(await searchNotes(await openScope(ctx), query)),
  }),
  defineAction({
    ...base,
    name: 'files_list',
    method: 'GET',
    route: '/api/v1/files',
    tool: 'svc_api_files_list',
    effect: 'read',
    summary: 'Lists a folder of the Home: name, path, kind (file or folder), size and mtime of each entry.',
    input: { query: Obj({ path: Type.Optional(Type.String({ description: 'Folder, Home-relative; empty for the root' })) }) },
    handler: async (ctx, { query }) => listFolder(await openScope(ctx), query.path ?? ''),
  }),
  defineAction({
    ...base,
    name: 'files_read',
    method: 'GET',
    route: '/api/v1/files/content',
    tool: 'svc_api_files_read',
    effect: 'read',
    responseEncoding: 'base64',
    summary: 'Reads a file of the Home: raw bytes over HTTP (with Range support), base64 on the command line and MCP. The ETag is the hash of the bytes.',
    input: { query: Obj({ path: HomePath }), headers: Headers({ range: Type.Optional(Type.String({ description: 'bytes=start-end' })) }) },
    handler: async (ctx, { query, headers }) => readFile(await openScope(ctx), query.path, headers.range),
  }),
  defineAction({
    ...base,
    name: 'files_write',
    method: 'PUT',
    route: '/api/v1/files/content',
    tool: 'svc_api_files_write',
    effect: 'destructive',
    requestEncoding: 'json',
    summary:
      'Writes a file of the Home atomically: If-Match with its current ETag to replace it, or If-None-Match: * to create it. Send content (UTF-8 text) or content_base64.',
    input: {
      query: Obj({ path: HomePath }),
      headers: Headers({ 'if-match': Type.Optional(Type.String()), 'if-none-match': Type.Optional(Type.Literal('*')) }),
      body: Obj({
        content: Type.Optional(Type.String()),
        content_base64: Type.Optional(Type.String({ contentEncoding: 'base64', pattern: '^[A-Za-z0-9+/]*={0,2}$' })),
      }),
    },
    handler: async (ctx, { query, headers, body }) =>
      writeFile(await openScope(ctx), query.path, body, { ifMatch: headers['if-match'], ifNoneMatch: headers['if-none-match'] }),
  }),
  defineAction({
    ...base,
    name: 'files_delete',
    method: 'DELETE',
    route: '/api/v1/files/content',
    tool: 'svc_api_files_delete',
    effect: 'destructive',
    summary: 'Deletes a file of the Home at its current ETag (If-Match), or an empty folder.',
    input: { query: Obj({ path: HomePath }), headers: IfMatch },
    handler: async (ctx, { query, headers }) => deleteFile(await openScope(ctx), query.path, headers['if-match']),
  }),
];
