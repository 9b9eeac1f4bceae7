/**
 * Occurrences of one parsed event, expanded by ical.js (RRULE, RDATE, EXDATE,
 * RECURRENCE-ID overrides) and kept per file version: a series is expanded
 * once up to the latest window asked for, then answered by binary search.
 * Times are numbers: instants (ms) for zoned and UTC times, wall-clock times
 * (fields read as UTC) for floating times and all-day dates, placed in the
 * viewer's zone only when a window is answered (docs/calendar.md, "Recurrence").
 */
import ICAL from 'ical.js';
import { eventEnd, type ParsedIcs } from './ics.js';
import { instantToWall, wallToInstant } from './zones.js';

export interface Occurrence {
  /** Instant (ms), or wall time when `floating`. */
  start: number;
  end: number;
  floating: boolean;
  allDay: boolean;
  /** The occurrence's original start (RECURRENCE-ID), in the series' terms (`floating` of the series); null for a single event. */
  recurrenceId: number | null;
  /** Where its title and properties come from: the master, or an override. */
  component: ICAL.Component;
}

/** At most this many occurrences of one series are expanded (a minutely rule would never end). */
export const MAX_OCCURRENCES = 100_000;
/** Margin around a window for floating times, whose instant depends on the viewer's zone (max offset 14 h). */
const FLOAT_MARGIN = 15 * 3_600_000;

function timeValue(t: ICAL.Time): { v: number; floating: boolean } {
  if (t.isDate) return { v: Date.UTC(t.year, t.month - 1, t.day), floating: true };
  if (t.zone === ICAL.Timezone.localTimezone || !t.zone) return { v: Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second), floating: true };
  return { v: t.toUnixTime() * 1000, floating: false };
}

/** The instant a time value stands for, with floating values placed in `zone`. */
export const instantOf = (v: number, floating: boolean, zone: string): number => (floating ? wallToInstant(zone, v) : v);

/**
 * The one occurrence of an event that neither repeats nor has overrides (most
 * events); null for anything else, which goes through `Expansion`.
 */
export function singleOccurrence(ics: ParsedIcs): Occurrence | null {
  const m = ics.master;
  if (!m || ics.overrides.length > 0 || m.hasProperty('rrule') || m.hasProperty('rdate')) return null;
  const s = timeValue(ics.facts.dtstart);
  const e = timeValue(ics.facts.dtend);
  return { start: s.v, end: Math.max(s.v, e.v), floating: s.floating, allDay: ics.facts.allDay, recurrenceId: null, component: m };
}

export class Expansion {
  /** Occurrences that are exactly the master's pattern (start order; uniform duration). */
  private readonly base: number[] = [];
  /** Overridden occurrences (any start, any duration). */
  private readonly moved: Occurrence[] = [];
  private readonly duration: number;
  private readonly floating: boolean;
  private readonly allDay: boolean;
  private readonly master: ICAL.Component | null;
  private iter: ICAL.RecurExpansion | null = null;
  private event: ICAL.Event | null = null;
  /** Value (in the series' own terms) up to which `base` and `moved` are complete. */
  private coveredUntil = -Infinity;
  /** RECURRENCE-IDs of the overrides (series terms): the rule's occurrences they replace. */
  private readonly replaced = new Set<number>();
  private done = false;
  /** True when the expansion stopped at MAX_OCCURRENCES. */
  truncated = false;

  constructor(private readonly ics: ParsedIcs) {
    const f = ics.facts;
    this.master = ics.master;
    const s = timeValue(f.dtstart);
    const e = timeValue(f.dtend);
    this.floating = s.floating;
    this.allDay = f.allDay;
    this.duration = Math.max(0, e.v - s.v);
    if (!this.master) {
      // Overrides only (an invitation to one occurrence): each is an occurrence of its own.
      for (const o of ics.overrides) this.moved.push(this.single(o));
      this.done = true;
    } else if (!this.master.hasProperty('rrule') && !this.master.hasProperty('rdate')) {
      this.base.push(s.v);
      for (const o of ics.overrides) this.moved.push(this.single(o));
      this.done = true;
    } else {
      // Overrides are known from the file: each is an occurrence of its own, wherever it moved to.
      for (const o of ics.overrides) {
        const occ = this.single(o);
        this.moved.push(occ);
        if (occ.recurrenceId !== null) this.replaced.add(occ.recurrenceId);
      }
      this.event = new ICAL.Event(this.master);
      this.iter = this.event.iterator();
    }
  }

  get recurring(): boolean {
    return this.event !== null;
  }

  private single(c: ICAL.Component): Occurrence {
    const ev = new ICAL.Event(c);
    const s = timeValue(ev.startDate);
    const e = timeValue(eventEnd(ev));
    const rid = c.getFirstPropertyValue('recurrence-id');
    const r = rid instanceof ICAL.Time ? timeValue(rid).v : null;
    return { start: s.v, end: Math.max(s.v, e.v), floating: s.floating, allDay: ev.startDate.isDate, recurrenceId: r, component: c };
  }

  /** Expands until every occurrence starting before `until` (series terms) is known. */
  private extend(until: number): void {
    if (this.done || until <= this.coveredUntil) return;
    const iter = this.iter!;
    for (;;) {
      if (this.base.length + this.moved.length >= MAX_OCCURRENCES) {
        this.truncated = true;
        this.done = true;
        return;
      }
      let next: ICAL.Time | null;
      try {
        next = iter.next();
      } catch {
        // A rule ical.js cannot follow (a file another program wrote): the occurrences found so far stand.
        next = null;
      }
      if (!next) {
        this.done = true;
        return;
      }
      const rid = timeValue(next);
      if (!this.replaced.has(rid.v)) this.base.push(rid.v);
      if (rid.v >= until) {
        this.coveredUntil = rid.v;
        return;
      }
    }
  }

  /**
   * Occurrences that overlap the window [from, to) of instants, floating ones
   * placed in `zone`. A zero-length occurrence at `from` counts.
   */
  between(from: number, to: number, zone: string): Occurrence[] {
    const lo = this.floating ? instantToWall(zone, from) - FLOAT_MARGIN : from;
    const hi = this.floating ? instantToWall(zone, to) + FLOAT_MARGIN : to;
    this.extend(hi);
    const out: Occurrence[] = [];
    const overlaps = (s: number, e: number, floating: boolean) => {
      const si = instantOf(s, floating, zone);
      const ei = instantOf(e, floating, zone);
      return si < to && (ei > from || (ei === si && si >= from));
    };
    const base = this.base;
    // First base occurrence that may still run at `lo`.
    let a = 0;
    let b = base.length;
    const first = lo - this.duration;
    while (a < b) {
      const m = (a + b) >> 1;
      if (base[m]! < first) a = m + 1;
      else b = m;
    }
    const component = this.master ?? this.ics.overrides[0]!;
    const recurring = this.recurring;
    for (let i = a; i < base.length && base[i]! < hi; i++) {
      const s = base[i]!;
      if (!overlaps(s, s + this.duration, this.floating)) continue;
      out.push({ start: s, end: s + this.duration, floating: this.floating, allDay: this.allDay, recurrenceId: recurring ? s : null, component });
    }
    for (const o of this.moved) if (overlaps(o.start, o.end, o.floating)) out.push(o);
    return out;
  }
}
