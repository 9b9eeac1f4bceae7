/** iCalendar texts for tests: a VCALENDAR holding one VEVENT made of `lines`, with CRLF line ends and a final CRLF. */
export const calendarWith = (lines: string[], prodid = '-//test//EN') =>
  ['BEGIN:VCALENDAR', 'VERSION:2.0', `PRODID:${prodid}`, 'BEGIN:VEVENT', ...lines, 'END:VEVENT', 'END:VCALENDAR', ''].join('\r\n');

/** The same with the event's UID and a fixed DTSTAMP before `lines`. */
export const ics = (uid: string, lines: string[]) => calendarWith([`UID:${uid}`, 'DTSTAMP:20260101T000000Z', ...lines]);
