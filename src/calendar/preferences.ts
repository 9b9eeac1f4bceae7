/**
 * Calendar preferences, kept in the Home as `.quire/calendar.json` so they
 * travel with its backups (docs/quire-folder.md). A PUT changes the keys it
 * names: null clears one, an omitted key stays (docs/calendar.md, "Preferences").
 */
import { AppError } from '../core/errors.js';
import type { Scope } from '../notes/access.js';
import type { Vault } from '../vault/vault.js';
import { readOrNull, writeFile } from './storage.js';

export const PREFERENCES_PATH = '.quire/calendar.json';

export const PREFERENCE_KEYS = [
  'date_format',
  'default_event_calendar_id',
  'first_day_of_week',
  'hour_height',
  'snap_to_items',
  'snap_to_now',
  'time_format',
  'time_step_minutes',
] as const;
export type PreferenceKey = (typeof PREFERENCE_KEYS)[number];
export type Preferences = Record<PreferenceKey, string | number | boolean | null>;

/** The enums of the spec, so a hand-edited file with an unknown value reads as unset rather than as something the client cannot show. */
const ALLOWED: Partial<Record<PreferenceKey, ReadonlyArray<string | number>>> = {
  date_format: ['system', 'dmy_slash_padded_short', 'mdy_slash_short', 'dmy_slash_short', 'mdy_slash_long', 'dmy_slash_padded_long', 'dmy_dot', 'dmy_dash', 'ymd_slash', 'ymd_dot', 'iso'],
  first_day_of_week: ['system', 'sunday', 'monday', 'saturday'],
  time_format: ['system', '24_hour', '12_hour'],
  time_step_minutes: [5, 10, 15, 30],
};
const TYPES: Record<PreferenceKey, 'string' | 'number' | 'boolean'> = {
  date_format: 'string',
  default_event_calendar_id: 'string',
  first_day_of_week: 'string',
  hour_height: 'number',
  snap_to_items: 'boolean',
  snap_to_now: 'boolean',
  time_format: 'string',
  time_step_minutes: 'number',
};

function fromStored(v: Record<string, unknown>): Preferences {
  const out = {} as Preferences;
  for (const k of PREFERENCE_KEYS) {
    const x = v[k];
    const ok = typeof x === TYPES[k] && (ALLOWED[k] === undefined || ALLOWED[k]!.includes(x as string | number)) && !(k === 'hour_height' && (!Number.isInteger(x) || (x as number) < 0));
    out[k] = ok ? (x as string | number | boolean) : null;
  }
  return out;
}

async function load(scope: Scope): Promise<{ stored: Record<string, unknown>; etag: string | null }> {
  const r = await readOrNull(scope, PREFERENCES_PATH);
  if (!r) return { stored: {}, etag: null };
  try {
    const v = JSON.parse(r.bytes.toString('utf8')) as unknown;
    return { stored: v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {}, etag: r.etag };
  } catch {
    return { stored: {}, etag: r.etag };
  }
}

/** Read once per state of the vault: every calendar grid asks which calendar is the default. */
const cache = new WeakMap<Vault, { generation: number; prefs: Preferences }>();

/** Every key, null where unset. */
export async function readPreferences(scope: Scope): Promise<Preferences> {
  const generation = scope.vault.generation;
  const hit = cache.get(scope.vault);
  if (hit?.generation === generation) return { ...hit.prefs };
  const prefs = fromStored((await load(scope)).stored);
  cache.set(scope.vault, { generation, prefs });
  return { ...prefs };
}

/**
 * Applies `patch` (already validated against the spec's enums by the action's
 * schema). Keys the file holds that this version does not know stay.
 */
export async function writePreferences(scope: Scope, patch: Partial<Preferences>, checkCalendar: (id: string) => Promise<unknown>): Promise<Preferences> {
  if (typeof patch.default_event_calendar_id === 'string') await checkCalendar(patch.default_event_calendar_id);
  for (let attempt = 1; ; attempt++) {
    const { stored, etag } = await load(scope);
    const next: Record<string, unknown> = { ...stored };
    for (const k of PREFERENCE_KEYS) {
      if (!(k in patch)) continue;
      if (patch[k] === null) delete next[k];
      else next[k] = patch[k];
    }
    const text = JSON.stringify(next, null, 2) + '\n';
    try {
      await writeFile(scope, PREFERENCES_PATH, text, etag ? { ifMatch: etag } : { ifNoneMatch: '*' });
      return fromStored(next);
    } catch (e) {
      if (!(e instanceof AppError && e.status === 412) || attempt >= 3) throw e;
    }
  }
}
