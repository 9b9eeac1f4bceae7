/**
 * Notes area of the spec (document 2), "Tasks and task views" (9 actions, scope data).
 * Task views live in `.base` files under Views with a stable ID in their YAML.
 * Declarations only; handlers are attached when the area is built.
 */
import { Type } from '@sinclair/typebox';
import { defineAction } from '../actions/types.js';

const AREA = 'Tasks and task views';

const TaskIdBody = Type.Object(
  { task_id: Type.String({ description: 'ID of the File Task' }) },
  { additionalProperties: false },
);
const ViewIdPath = Type.Object(
  { id: Type.String({ minLength: 1, description: 'Stable YAML ID of the view; works after the file is renamed' }) },
  { additionalProperties: false },
);
const PageQuery = Type.Object(
  {
    cursor: Type.Optional(Type.Integer({ description: 'The `next_cursor` of the previous page, unchanged' })),
    limit: Type.Optional(Type.Integer({ description: 'Page size; reduce it after an overflow' })),
  },
  { additionalProperties: false },
);
const View = Type.Object(
  {},
  {
    additionalProperties: true,
    description: 'One view object of the `.base` file format; the route assigns or checks its stable ID',
  },
);

export const actions = [
  defineAction({
    name: 'attach',
    method: 'POST',
    route: '/api/v1/notes/tasks/attach',
    tool: 'svc_tasks_attach_file_task_to_log',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Attaches a File Task to its latest eligible log entry.',
    input: { body: TaskIdBody },
  }),
  defineAction({
    name: 'by_day',
    method: 'GET',
    route: '/api/v1/notes/tasks/day',
    tool: 'svc_api_by_day',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Lists Tasks by day for the window from `from` to `to`, optionally in time zone `tz`. Request smaller windows within the handler bounds.',
    input: {
      query: Type.Object(
        {
          from: Type.String({ description: 'Start of the window' }),
          to: Type.String({ description: 'End of the window' }),
          tz: Type.Optional(Type.String({ description: 'Time zone of the days' })),
        },
        { additionalProperties: false },
      ),
    },
  }),
  defineAction({
    name: 'detach',
    method: 'POST',
    route: '/api/v1/notes/tasks/detach',
    tool: 'svc_tasks_detach_file_task_from_log',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Detaches a File Task from the log entry it is attached to.',
    input: { body: TaskIdBody },
  }),
  defineAction({
    name: 'notes_task_by_id',
    method: 'GET',
    route: '/api/v1/notes/tasks/by-id',
    tool: 'svc_api_notes_task_by_id',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Reads one Task by its ID.',
    input: {
      query: Type.Object({ task_id: Type.String() }, { additionalProperties: false }),
    },
  }),
  defineAction({
    name: 'notes_task_views_create',
    method: 'POST',
    route: '/api/v1/notes/tasks/views',
    tool: 'svc_api_notes_task_views_create',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Creates a task view in its own readable `.base` file under Views; the route assigns or checks its stable ID.',
    input: { body: Type.Object({ view: View }, { additionalProperties: false }) },
  }),
  defineAction({
    name: 'notes_task_views_get',
    method: 'GET',
    route: '/api/v1/notes/tasks/views/{id}',
    tool: 'svc_api_notes_task_views_get',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Reads a task view by its stable YAML ID, which keeps working after the file is renamed.',
    input: { path: ViewIdPath },
  }),
  defineAction({
    name: 'notes_task_views_list',
    method: 'GET',
    route: '/api/v1/notes/tasks/views',
    tool: 'svc_api_notes_task_views_list',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Lists one bounded page of the visible `.base` task view files. Pass `next_cursor` unchanged.',
    input: { query: PageQuery },
  }),
  defineAction({
    name: 'notes_task_views_update',
    method: 'PUT',
    route: '/api/v1/notes/tasks/views/{id}',
    tool: 'svc_api_notes_task_views_update',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      "Replaces a task view only at the client's source revision: header `If-Match` carries the view file's hash, which also rejects a concurrent file write after the read.",
    input: {
      path: ViewIdPath,
      headers: Type.Object(
        { 'if-match': Type.String({ description: 'File hash of the view file the client read' }) },
        { additionalProperties: true },
      ),
      body: Type.Object({ view: View }, { additionalProperties: false }),
    },
  }),
  defineAction({
    name: 'notes_tasks_list',
    method: 'GET',
    route: '/api/v1/notes/tasks',
    tool: 'svc_api_notes_tasks_list',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: "Lists the Tasks in the caller's Home one page at a time. Pass `next_cursor` unchanged; reduce `limit` after an overflow.",
    input: { query: PageQuery },
  }),
];
