/**
 * Error helpers of the vault layer. Everything here builds an AppError from
 * src/core/errors.ts; nothing new is added to the shared vocabulary.
 *
 * Messages name Home-relative paths only (never the server's absolute paths),
 * and quote user input with JSON.stringify so control characters cannot reach
 * a log line or a terminal unescaped.
 */
import { AppError, type ErrorCode, type ErrorDetails } from '../core/errors.js';

/** Why a path was refused; `details.reason` of path errors. */
export type PathRefusal =
  | 'not_a_string'
  | 'empty'
  | 'control_character'
  | 'invalid_unicode'
  | 'absolute'
  | 'backslash'
  | 'empty_segment'
  | 'dot_segment'
  | 'dot_dot_segment'
  | 'segment_too_long'
  | 'path_too_long'
  | 'reserved_name'
  | 'internal_path'
  | 'symlink_escape'
  | 'symlink_unresolvable'
  | 'case_conflict';

export function show(s: string): string {
  return JSON.stringify(s);
}

/** Attaches the low-level error as `cause` (for logs) without exposing it in the envelope. */
function withCause(err: AppError, cause: unknown): AppError {
  if (cause !== undefined) Object.defineProperty(err, 'cause', { value: cause, enumerable: false, configurable: true });
  return err;
}

export function pathError(
  rel: string,
  reason: PathRefusal,
  message: string,
  extra: ErrorDetails = {},
  code: ErrorCode = 'bad_request',
): AppError {
  return new AppError(code, message, { details: { path: rel, reason, ...extra } });
}

/** `If-None-Match: *` was sent and the file already exists. */
export function alreadyExists(rel: string, currentEtag: string): AppError {
  return new AppError('conflict', `${show(rel)} already exists (If-None-Match: * forbids overwriting it)`, {
    status: 412,
    details: { path: rel, reason: 'already_exists', current_etag: currentEtag },
  });
}

/** The write would take the Home over its quota. Status 507 Insufficient Storage. */
export function quotaExceeded(rel: string, quotaBytes: number, usageBytes: number, deltaBytes: number): AppError {
  return new AppError(
    'forbidden',
    `Writing ${show(rel)} needs ${deltaBytes} more bytes, but the Home uses ${usageBytes} of its ${quotaBytes}-byte quota` +
      ` (${Math.max(0, quotaBytes - usageBytes)} bytes free)`,
    {
      status: 507,
      details: {
        path: rel,
        reason: 'quota_exceeded',
        quota_bytes: String(quotaBytes),
        usage_bytes: String(usageBytes),
        needed_bytes: String(deltaBytes),
      },
    },
  );
}

export type FsOp = 'read' | 'write' | 'delete' | 'move' | 'list' | 'stat' | 'mkdir' | 'watch';

/**
 * Maps a Node file-system error to an AppError that names the Home-relative
 * path. Errors that are already AppErrors pass through unchanged.
 */
export function fsError(e: unknown, op: FsOp, rel: string): AppError {
  if (e instanceof AppError) return e;
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  const p = show(rel);
  let err: AppError;
  switch (code) {
    case 'ENOENT':
      err = new AppError('not_found', `${p} does not exist`, { details: { path: rel, reason: 'not_found' } });
      break;
    case 'EEXIST':
    case 'ENOTEMPTY':
      err = new AppError(
        'conflict',
        code === 'ENOTEMPTY' ? `Folder ${p} is not empty` : `${p} already exists`,
        { details: { path: rel, reason: code === 'ENOTEMPTY' ? 'folder_not_empty' : 'already_exists' } },
      );
      break;
    case 'ENOTDIR':
      err = new AppError('conflict', `A parent of ${p} is a file, not a folder`, {
        details: { path: rel, reason: 'parent_not_folder' },
      });
      break;
    case 'EISDIR':
      err = new AppError('conflict', `${p} is a folder, not a file`, { details: { path: rel, reason: 'is_a_folder' } });
      break;
    case 'ENAMETOOLONG':
      err = new AppError('name_too_long', `${p} is too long for the file system`, {
        details: { path: rel, reason: 'path_too_long' },
      });
      break;
    case 'ELOOP':
      err = new AppError('bad_request', `${p} goes through a symbolic link loop`, {
        details: { path: rel, reason: 'symlink_unresolvable' },
      });
      break;
    case 'ENOSPC':
    case 'EDQUOT':
      err = new AppError('service_unavailable', `The server's disk is full; ${p} was not changed (${op})`, {
        status: 507,
        details: { path: rel, reason: 'disk_full' },
      });
      break;
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      err = new AppError('internal', `The server is not allowed to ${op} ${p} on disk (${code})`, {
        details: { path: rel, reason: 'fs_permission_denied' },
      });
      break;
    case 'EMFILE':
    case 'ENFILE':
    case 'EBUSY':
      err = new AppError('service_unavailable', `The server is busy and could not ${op} ${p}; try again`, {
        details: { path: rel, reason: 'fs_busy' },
        headers: { 'Retry-After': '1' },
      });
      break;
    default:
      err = new AppError('internal', `Could not ${op} ${p} (${code ?? 'unknown error'})`, {
        details: { path: rel, reason: 'fs_error' },
      });
  }
  return withCause(err, e);
}
