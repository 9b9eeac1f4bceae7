/**
 * Notes area of the spec (document 2), "Tasks and task views".
 * Task views live in `.base` files under Views with a stable ID in their YAML.
 * Handlers call the sibling modules, loaded at the first call through lazy.ts: tasks.ts (tasks and line edits),
 * attach.ts (File Tasks and log entries), views.ts (`.base` views). The
 * extension actions at the end are documented in docs/tasks.md.
 */
import { Type } from '@sinclair/typebox';
import { defineAction } from '../actions/types.js';
import { Headers, Nullable, Obj, PathString, specAction } from '../actions/spec.js';
import { reply } from '../actions/reply.js';
import { openScope } from '../notes/access.js';
import { onFirstUse } from '../core/first-use.js';

/** The area's domain code (./lazy.ts), imported by the first handler that runs, then kept (core/first-use.ts). */
export const tasksCode = onFirstUse(() => import('./lazy.js'));
const attach = async () => (await tasksCode()).attach;
const tasks = async () => (await tasksCode()).tasks;
const views = async () => (await tasksCode()).views;

const AREA = 'Tasks and task views';

const TaskIdBody = Obj({ task_id: Type.String({ description: 'ID of the File Task' }) });
const ViewIdPath = Obj({ id: PathString('Stable YAML ID of the view; works after the file is renamed') });
const PageQuery = Obj({
  cursor: Type.Optional(Type.Integer({ description: 'The `next_cursor` of the previous page, unchanged' })),
  limit: Type.Optional(Type.Integer({ description: 'Page size; reduce it after an overflow' })),
});
const View = Type.Object(
  {},
  { additionalProperties: true, description: 'One view object of the `.base` file format; the route assigns or checks its stable ID' },
);

export const actions = [
  specAction('attach', {
    summary: 'Attaches a File Task to its latest eligible log entry.',
    input: { body: TaskIdBody },
    handler: async (ctx, { body }) => (await attach()).attachTask(await openScope(ctx), body.task_id),
  }),
  specAction('by_day', {
    summary: 'Lists Tasks by day for the window from `from` to `to`, optionally in time zone `tz`. Request smaller windows within the handler bounds.',
    input: {
      query: Obj({
        from: Type.String({ description: 'Start of the window' }),
        to: Type.String({ description: 'End of the window' }),
        tz: Type.Optional(Type.String({ description: 'Time zone of the days' })),
      }),
    },
    handler: async (ctx, { query }) => (await tasks()).tasksByDay(await openScope(ctx), query),
  }),
  specAction('detach', {
    summary: 'Detaches a File Task from the log entry it is attached to.',
    input: { body: TaskIdBody },
    handler: async (ctx, { body }) => (await attach()).detachTask(await openScope(ctx), body.task_id),
  }),
  specAction('notes_task_by_id', {
    summary: 'Reads one Task by its ID.',
    input: { query: Obj({ task_id: Type.String() }) },
    handler: async (ctx, { query }) => (await tasks()).taskById(await openScope(ctx), query.task_id),
  }),
  specAction('notes_task_views_create', {
    summary: 'Creates a task view in its own readable `.base` file under Views; the route assigns or checks its stable ID.',
    input: { body: Obj({ view: View }) },
    handler: async (ctx, { body }) => {
      const v = await (await views()).createView(await openScope(ctx), body.view);
      return reply(v, { status: 201, etag: v.etag });
    },
  }),
  specAction('notes_task_views_get', {
    summary: 'Reads a task view by its stable YAML ID, which keeps working after the file is renamed.',
    input: { path: ViewIdPath },
    handler: async (ctx, { path }) => {
      const v = await (await views()).findView(await openScope(ctx), path.id);
      return reply(v, { etag: v.etag });
    },
  }),
  specAction('notes_task_views_list', {
    summary: 'Lists one bounded page of the visible `.base` task view files. Pass `next_cursor` unchanged.',
    input: { query: PageQuery },
    handler: async (ctx, { query }) => (await views()).listViews(await openScope(ctx), query),
  }),
  specAction('notes_task_views_update', {
    summary:
      "Replaces a task view only at the client's source revision: header `If-Match` carries the view file's hash, which also rejects a concurrent file write after the read.",
    input: {
      path: ViewIdPath,
      headers: Headers({ 'if-match': Type.String({ description: 'File hash of the view file the client read' }) }),
      body: Obj({ view: View }),
    },
    handler: async (ctx, { path, headers, body }) => {
      const v = await (await views()).updateView(await openScope(ctx), path.id, headers['if-match'], body.view);
      return reply(v, { etag: v.etag });
    },
  }),
  specAction('notes_tasks_list', {
    summary: "Lists the Tasks in the caller's Home one page at a time. Pass `next_cursor` unchanged; reduce `limit` after an overflow.",
    input: { query: PageQuery },
    handler: async (ctx, { query }) => (await tasks()).listTasks(await openScope(ctx), query),
  }),
  ...extensionActions(),
];

/** Actions beyond the spec's table (`extension: true`), documented in docs/tasks.md. */
function extensionActions() {
  const base = {
    surfaces: ['cli', 'mcp', 'webmcp'] as ('cli' | 'mcp' | 'webmcp')[],
    scopes: ['data'] as 'data'[],
    requestEncoding: 'json' as const,
    responseEncoding: 'json' as const,
    recentConfirmation: false,
    area: AREA,
    extension: true,
  };
  const OptionalIfMatch = Headers({
    'if-match': Type.Optional(Type.String({ description: "The note's ETag; when given, the change happens only at that revision (412 otherwise)" })),
  });
  const Target = {
    task_id: Type.Optional(Type.String({ minLength: 1, description: 'ID of the task (its block id, or a File Task note id)' })),
    path: Type.Optional(Type.String({ minLength: 1, description: 'With `line`: a task found by position; it gets a block id' })),
    line: Type.Optional(Type.Integer({ minimum: 1, description: 'Line of the task in `path` (1-based)' })),
  };
  const Due = Type.Optional(Nullable(Type.String({ description: 'Due date YYYY-MM-DD' }), { description: 'Due date YYYY-MM-DD; null removes it' }));
  return [
    defineAction({
      ...base,
      name: 'notes_task_create',
      method: 'POST',
      route: '/api/v1/notes/tasks',
      tool: 'svc_api_notes_task_create',
      effect: 'destructive',
      summary: 'Adds a task line `- [ ] text 📅 due ^id` to a note: at the end, at the end of a heading\'s section, or after a given line. Only that line is added.',
      input: {
        headers: OptionalIfMatch,
        body: Obj({
          note_id: Type.Optional(Type.String({ minLength: 1, description: 'ID of the note (or give `path`)' })),
          path: Type.Optional(Type.String({ minLength: 1, description: 'Home-relative path of the note (or give `note_id`)' })),
          text: Type.String({ minLength: 1, description: 'Text of the task, one line' }),
          due: Due,
          heading: Type.Optional(Type.String({ description: 'Add the task at the end of this heading\'s section' })),
          after_line: Type.Optional(Type.Integer({ minimum: 0, description: 'Add the task after this line (0: at the top)' })),
        }),
      },
      handler: async (ctx, { headers, body }) => {
        const t = await (await tasks()).createTask(await openScope(ctx), body, headers['if-match']);
        return reply(t, { status: 201, etag: t.etag });
      },
    }),
    defineAction({
      ...base,
      name: 'notes_task_status_set',
      method: 'POST',
      route: '/api/v1/notes/tasks/status',
      tool: 'svc_api_notes_task_status_set',
      effect: 'destructive',
      summary:
        'Sets the status character of a task (`x` done, `/` in progress, `-` cancelled, space open); done adds `✅ date`, undone removes it. Rewrites only that line.',
      input: {
        headers: OptionalIfMatch,
        body: Obj({
          ...Target,
          status: Type.String({ minLength: 1, maxLength: 2, description: 'One character: " ", "x", "/", "-", ...' }),
          timezone: Type.Optional(Type.String({ description: 'Time zone of the `✅` date (server time when omitted)' })),
        }),
      },
      handler: async (ctx, { headers, body }) => {
        const t = await (await tasks()).setTaskStatus(await openScope(ctx), body, headers['if-match']);
        return reply(t, { etag: t.etag });
      },
    }),
    defineAction({
      ...base,
      name: 'notes_task_update',
      method: 'PATCH',
      route: '/api/v1/notes/tasks/by-id',
      tool: 'svc_api_notes_task_update',
      effect: 'destructive',
      summary: "Changes a task's text and/or due date, keeping its status, other markers and block id. Rewrites only that line.",
      input: {
        headers: OptionalIfMatch,
        body: Obj({ ...Target, text: Type.Optional(Type.String({ minLength: 1, description: 'New text, one line' })), due: Due }),
      },
      handler: async (ctx, { headers, body }) => {
        const t = await (await tasks()).editTask(await openScope(ctx), body, headers['if-match']);
        return reply(t, { etag: t.etag });
      },
    }),
    defineAction({
      ...base,
      name: 'notes_task_view_rows',
      method: 'GET',
      route: '/api/v1/notes/tasks/views/{id}/rows',
      tool: 'svc_api_notes_task_view_rows',
      effect: 'read',
      requestEncoding: 'none',
      summary:
        "Evaluates one page of a `.base` view with the base's and the view's filters, sort, limit and groupBy. An Obsidian base lists the Home's files and a task view its tasks (`rows` says which).",
      input: {
        path: ViewIdPath,
        query: Obj({
          view: Type.Optional(Type.String({ description: 'Name of the view in the file (default: the first)' })),
          cursor: Type.Optional(Type.Integer({ description: 'The `next_cursor` of the previous page, unchanged' })),
          limit: Type.Optional(Type.Integer({ description: 'Rows per page, 1 to 1000 (default 200)' })),
          tz: Type.Optional(Type.String({ description: 'Time zone of `today()` and `now()` (server time when omitted)' })),
        }),
      },
      handler: async (ctx, { path, query }) => (await views()).viewRows(await openScope(ctx), path.id, query),
    }),
  ];
}
