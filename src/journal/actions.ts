/**
 * Notes area of the spec (document 2), "Daily notes and log entries".
 * Log entries are blocks of a Daily note, identified by stable block IDs.
 * Handlers are small lambdas over ./journal.ts (loaded at the first call, through ./lazy.ts); the Markdown form is in ./log-format.ts
 * and docs/vault-format.md, the shapes in docs/journal.md.
 */
import { Type } from '@sinclair/typebox';
import { Headers, Nullable, Obj, PathString, specAction } from '../actions/spec.js';
import { reply } from '../actions/reply.js';
import { openScope } from '../notes/access.js';
import { onFirstUse } from '../core/first-use.js';
import { checkDate } from './dates.js';

/** ./journal.ts (through ./lazy.ts), imported by the first handler that runs, then kept (core/first-use.ts). */
export const journalCode = onFirstUse(() => import('./lazy.js'));
const j = async () => (await journalCode()).journal;

const BlockIdPath = Obj({ block_id: PathString('Stable block ID of the log entry') });
const IfMatch = Headers({ 'if-match': Type.String({ description: 'Current ETag of the Daily note' }) });
const DailyQuery = Obj({ date: Type.Optional(Type.String({ description: 'Calendar date of the Daily note' })) });
const TimezoneHeaders = Headers({ 'x-svc-timezone': Type.Optional(Type.String({ description: "The caller's time zone" })) });
const Date_ = PathString('Calendar date of the Daily note');

/** A file already in the Home, linked below an entry as an embed line (default for images) or a plain link line. */
const Attachment = Obj({
  path: Type.String({ minLength: 1, description: 'Home-relative path of the file' }),
  embed: Type.Optional(Type.Boolean({ description: 'Embed line (`![[…]]`) or plain link line; default: embed for images' })),
});
/** An attachment link to restore: the items a delete answered (`target` stands in for a Missing file's `path`). */
const RestoredLink = Obj({
  path: Type.Optional(Nullable(Type.String())),
  target: Type.Optional(Type.String({ description: 'The link target as written' })),
  embed: Type.Optional(Type.Boolean()),
  missing: Type.Optional(Type.Boolean()),
});

/** One log entry to create: the body of `notes_journal_create_log` and each item of the batch. */
const LogEntry = Obj({
  attachments: Type.Optional(
    Type.Array(Attachment, { description: 'Files already in the Home, linked below the new entry in order, in the same write' }),
  ),
  client_id: Type.Optional(
    Nullable(
      Type.String({
        minLength: 1,
        description: 'Stable create identity from the Installation; the first outcome is retained so retries create no second entry',
      }),
    ),
  ),
  now: Type.String({ description: "Client's local wall time `YYYY-MM-DDTHH:MM[:SS]`" }),
  position: Type.Optional(
    Type.Union([Obj({ after: Type.String() }), Obj({ before: Type.String() }), Obj({ index: Type.Integer({ minimum: 0 }) }), Type.Null()], {
      description: 'After or before an entry of the same day (a block ID), or before the n-th entry; default: by time',
    }),
  ),
  text: Type.String({ description: 'Text of the log entry, one line' }),
  timezone: Type.String({ description: 'IANA time zone of `now`' }),
});

export const actions = [
  specAction('daily', {
    summary:
      "Reads the caller's Daily note and its log for a date (default today in the zone of header `X-Svc-Timezone`); an absent day reads as empty and is not created (ensure_daily creates it).",
    input: { query: DailyQuery, headers: TimezoneHeaders },
    handler: async (ctx, { query, headers }) => {
      const journal = await j();
      const { date } = journal.dayFor(ctx.now(), query, headers);
      const r = await journal.getDay(await openScope(ctx), date);
      return reply(r.record, r.etag ? { etag: r.etag } : {});
    },
  }),
  specAction('ensure_daily', {
    summary: 'Ensures the Daily note for a date exists, under the shared writer lock; the explicit write behind Home creation and adjacent-day navigation.',
    input: { query: DailyQuery, headers: TimezoneHeaders },
    handler: async (ctx, { query, headers }) => {
      const journal = await j();
      const { date, zone } = journal.dayFor(ctx.now(), query, headers);
      const r = await journal.ensureDay(await openScope(ctx), date, zone);
      return reply(r.record, { status: r.created ? 201 : 200, ...(r.etag ? { etag: r.etag } : {}) });
    },
  }),
  specAction('notes_journal_create_log', {
    summary: "Adds a log entry to the caller's Daily note, with attachments (files already in the Home) linked below it in the same write. A `client_id` makes retries create no second entry.",
    input: { body: LogEntry },
    handler: async (ctx, { body }) => {
      const [scope, journal] = await Promise.all([openScope(ctx), j()]);
      const [r] = await journal.createEntries(scope, [await journal.prepareCreate(scope, body)]);
      return reply({ ...r!.record, replayed: r!.replayed }, { status: r!.replayed ? 200 : 201, etag: r!.record.etag! });
    },
  }),
  specAction('notes_journal_create_log_batch', {
    summary: 'Adds up to 500 log entries in one all-or-nothing request, each as `notes_journal_create_log` takes it.',
    input: { body: Obj({ entries: Type.Array(LogEntry, { minItems: 1, maxItems: 500, description: 'The log entries to create' }) }) },
    handler: async (ctx, { body }) => {
      const [scope, journal] = await Promise.all([openScope(ctx), j()]);
      const specs = [];
      for (const [i, entry] of body.entries.entries()) specs.push(await journal.prepareCreate(scope, entry, `body.entries[${i}]`));
      const out = await journal.createEntries(scope, specs);
      return reply({ items: out.map((r) => ({ ...r.record, replayed: r.replayed })), next_cursor: null }, { status: 201 });
    },
  }),
  specAction('notes_journal_day', {
    summary: 'Reads the Daily note of a date and its log entries.',
    input: { path: Obj({ date: Date_ }) },
    handler: async (ctx, { path }) => {
      const r = await (await j()).getDay(await openScope(ctx), checkDate(path.date, 'path.date'));
      return reply(r.record, r.etag ? { etag: r.etag } : {});
    },
  }),
  specAction('notes_journal_delete_entry', {
    summary: "Deletes a log entry; needs header `If-Match` with the Daily note's current ETag.",
    input: { path: BlockIdPath, headers: IfMatch },
    handler: async (ctx, { path, headers }) => {
      const r = await (await j()).deleteEntry(await openScope(ctx), path.block_id, headers['if-match']);
      return reply(r, { etag: r.etag });
    },
  }),
  specAction('notes_journal_entry_attachments', {
    summary: 'Links files already in the Home below a log entry.',
    input: { path: BlockIdPath, body: Obj({ attachments: Type.Array(Attachment, { description: 'Files to link below the entry, in order' }) }) },
    handler: async (ctx, { path, body }) => {
      const r = await (await j()).addAttachments(await openScope(ctx), path.block_id, body.attachments);
      return reply(r.record, { etag: r.etag });
    },
  }),
  specAction('notes_journal_entry_note', {
    summary: "Writes the linked note body of a log entry; a `client_id` identifies the composer's operation so a retry does not write twice.",
    input: {
      path: BlockIdPath,
      body: Obj({
        body: Type.String({ description: 'Markdown body of the linked note' }),
        client_id: Type.Optional(Nullable(Type.String({ description: "The composer's stable linked-body operation identity" }))),
      }),
    },
    handler: async (ctx, { path, body }) => {
      const r = await (await j()).entryNote(await openScope(ctx), path.block_id, body.body, body.client_id ?? null);
      return reply(r.record, { status: r.created ? 201 : 200, etag: r.etag });
    },
  }),
  specAction('notes_journal_fix_line', {
    summary: "Fixes an unparsed line of a Daily note's log, identified by its hash; needs header `If-Match` with the Daily note's current ETag.",
    input: { path: Obj({ date: Date_, hash: PathString('Hash of the unparsed line') }), headers: IfMatch },
    handler: async (ctx, { path, headers }) => {
      const r = await (await j()).fixLine(await openScope(ctx), path.date, path.hash, headers['if-match']);
      return reply(r.record, { etag: r.etag });
    },
  }),
  specAction('notes_journal_get_entry', {
    summary: 'Reads one log entry by its stable block ID.',
    input: { path: BlockIdPath },
    handler: async (ctx, { path }) => {
      const r = await (await j()).getEntry(await openScope(ctx), path.block_id);
      return reply(r.record, { etag: r.etag });
    },
  }),
  specAction('notes_journal_patch_entry', {
    summary:
      "Changes the date, start, end, time zone, title or tags of a log entry; omitted members stay as they are. Needs header `If-Match` with the Daily note's current ETag.",
    input: {
      path: BlockIdPath,
      headers: IfMatch,
      body: Obj({
        date: Type.Optional(Nullable(Type.String())),
        end: Type.Optional(Nullable(Type.String())),
        start: Type.Optional(Nullable(Type.String())),
        title: Type.Optional(Nullable(Type.String())),
        tz: Type.Optional(Nullable(Type.String())),
        tags: Type.Optional(Nullable(Type.Array(Type.String()))),
      }),
    },
    handler: async (ctx, { path, headers, body }) => {
      const r = await (await j()).patchEntry(await openScope(ctx), path.block_id, headers['if-match'], body);
      return reply(r.record, { etag: r.etag });
    },
  }),
  specAction('notes_journal_remove_attachment', {
    summary: 'Removes one attachment link from below a log entry.',
    input: { path: BlockIdPath, body: Obj({ target: Type.String({ description: 'Link target of the attachment to remove' }) }) },
    handler: async (ctx, { path, body }) => {
      const r = await (await j()).removeAttachment(await openScope(ctx), path.block_id, body.target);
      return reply(r.record, { etag: r.etag });
    },
  }),
  specAction('notes_journal_restore_attachments', {
    summary: 'Restores the attachment links of a log entry from an undo, including links to files that stay Missing.',
    input: {
      path: BlockIdPath,
      body: Obj({ attachments: Type.Array(RestoredLink, { description: 'Attachment links to restore, as the delete answered them' }) }),
    },
    handler: async (ctx, { path, body }) => {
      const r = await (await j()).restoreAttachments(await openScope(ctx), path.block_id, body.attachments);
      return reply(r.record, { etag: r.etag });
    },
  }),
];
