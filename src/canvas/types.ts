/**
 * Shapes and errors shared by the canvas modules. A canvas Note stores an
 * Excalidraw scene; these types name only the fields Quire reads and keep
 * every other field of an element as it came (`[key: string]: unknown`).
 */
import { AppError } from '../core/errors.js';

/** One Excalidraw element. Quire reads the fields below; the rest travel untouched. */
export interface ExcalidrawElement {
  id: string;
  type?: string;
  version: number;
  versionNonce: number;
  isDeleted?: boolean;
  /** Excalidraw's fractional z-index (since 0.17); ordered by plain string comparison. */
  index?: string | null;
  [key: string]: unknown;
}

/** The scene JSON of an `.excalidraw` file / the `## Drawing` block of an `.excalidraw.md` note. */
export interface ExcalidrawScene {
  type: 'excalidraw' | string;
  version: number;
  source: string;
  elements: ExcalidrawElement[];
  appState: Record<string, unknown>;
  files: Record<string, unknown>;
  [key: string]: unknown;
}

/** Bad input from a caller (elements, export options, chunk bounds): HTTP 400 `bad_request`. */
export class CanvasInputError extends AppError {
  /** Position of the offending element in its array, when the error is about one. */
  readonly index: number | undefined;
  readonly field: string;
  constructor(field: string, message: string, index?: number, limit?: { reason: string; max: number }) {
    super('bad_request', message, {
      details: {
        field,
        reason: limit?.reason ?? 'invalid_canvas_input',
        ...(index !== undefined ? { index: String(index) } : {}),
        ...(limit ? { max: String(limit.max) } : {}),
      },
    });
    this.name = 'CanvasInputError';
    this.field = field;
    this.index = index;
  }
}

export type CanvasNoteErrorReason =
  | 'not_canvas'
  | 'no_drawing'
  | 'compressed_unsupported'
  | 'invalid_json'
  | 'invalid_scene';

/**
 * A Note that cannot be read as a canvas: not an Excalidraw note at all, or
 * one whose drawing block is missing, compressed or broken. HTTP 400
 * `bad_request` with `details.reason`; a handler may choose another status.
 */
export class CanvasNoteError extends AppError {
  readonly reason: CanvasNoteErrorReason;
  constructor(reason: CanvasNoteErrorReason, message: string) {
    super('bad_request', message, { details: { reason } });
    this.name = 'CanvasNoteError';
    this.reason = reason;
  }
}
