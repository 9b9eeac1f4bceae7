/**
 * The pure rules behind following a vault's Obsidian settings: Daily-note
 * names from Moment formats and back, the settings files' defaults,
 * attachment folders, Daily-note template variables; and that the settings
 * are read again from disk when they change.
 */
import fs from 'node:fs';
import path from 'node:path';
import moment from 'moment';
import { afterAll, describe, expect, it } from 'vitest';
import { fillTemplate } from '../../src/templates/templates.js';
import {
  attachmentFolderFor,
  attachmentSettings,
  dailyNotePath,
  dailyNotesSettings,
  dateOfDailyNotePath,
  DEFAULT_DAILY,
  isUsableDailyFormat,
  parseAppSettings,
  parseDailyNotesSettings,
  parseTemplatesSettings,
  templatesSettings,
  type DailyNotesSettings,
} from '../../src/vault/obsidian-settings.js';
import { tempDir } from '../helpers/instance.js';

const daily = (folder: string, format: string): DailyNotesSettings => ({ folder, format, template: null });

describe('Daily-note paths from Moment formats', () => {
  // [folder, format, date, path]
  const cases: Array<[string, string, string, string]> = [
    ['Journal', 'YYYY-MM-DD', '2026-03-09', 'Journal/2026-03-09.md'],
    ['', 'YYYY-MM-DD', '2026-03-09', '2026-03-09.md'],
    ['Daily/Notes', 'YYYY/MM/DD dddd', '2026-03-09', 'Daily/Notes/2026/03/09 Monday.md'],
    ['Daily/Notes', 'YYYY/MM/DD dddd', '2024-02-29', 'Daily/Notes/2024/02/29 Thursday.md'],
    ['Daily', 'DD-MM-YYYY', '2026-12-31', 'Daily/31-12-2026.md'],
    ['Daily', 'D.M.YY', '2026-01-05', 'Daily/5.1.26.md'],
    ['Log', 'YYYY/MMMM/Do', '2026-11-22', 'Log/2026/November/22nd.md'],
    ['Log', 'ddd, MMM D YYYY', '2026-11-22', 'Log/Sun, Nov 22 2026.md'],
    ['Log', 'gggg-[W]ww-e', '2026-03-09', 'Log/2026-W11-1.md'],
    ['Log', 'gggg-[W]ww-e', '2025-12-28', 'Log/2026-W01-0.md'],
    ['Log', 'GGGG-[W]WW-E', '2027-01-03', 'Log/2026-W53-7.md'],
    ['Log', 'YYYY-DDDD', '2026-02-01', 'Log/2026-032.md'],
    ['Log', '[Day] YYYYMMDD', '2026-03-09', 'Log/Day 20260309.md'],
    ['Log', 'YYYY/[Q]Q/MM-DD', '2026-08-15', 'Log/2026/Q3/08-15.md'],
  ];
  it.each(cases)('%s + %s: %s ⇄ %s', (folder, format, date, p) => {
    const s = daily(folder, format);
    expect(isUsableDailyFormat(folder, format)).toBe(true);
    expect(dailyNotePath(s, date)).toBe(p);
    expect(dateOfDailyNotePath(s, p)).toBe(date);
  });

  it('reads every day of three years back from its own name', () => {
    const formats = ['YYYY/MM/DD dddd', 'DD-MM-YYYY', 'Do MMMM YYYY', 'GGGG-[W]WW-E', 'gggg-[W]ww-e', 'D.M.YY', 'YYYY-DDDD', 'ddd, MMM D YYYY', 'YYYY/[Q]Q/MM-DD', 'YYYYMMDD'];
    for (const format of formats) {
      const s = daily('D', format);
      for (let d = moment.utc('2024-01-01'); d.year() < 2027; d.add(1, 'day')) {
        const iso = d.format('YYYY-MM-DD');
        expect(dateOfDailyNotePath(s, dailyNotePath(s, iso))).toBe(iso);
      }
    }
  });

  // [folder, format, path]: paths that are not a Daily note under these settings
  const notDaily: Array<[string, string, string]> = [
    ['Journal', 'YYYY-MM-DD', 'Journal/2026-02-30.md'], // no such day
    ['Journal', 'YYYY-MM-DD', 'Journal/2026-3-9.md'], // not the spelling the format writes
    ['Journal', 'YYYY-MM-DD', 'Notes/2026-03-09.md'], // other folder
    ['Journal', 'YYYY-MM-DD', 'Journal/sub/2026-03-09.md'],
    ['Journal', 'YYYY-MM-DD', 'Journal/2026-03-09.canvas'],
    ['Journal', 'YYYY-MM-DD', 'Journal/2026-03-09 notes.md'],
    ['Journal', 'YYYY-MM-DD', 'Journal/.md'],
    ['Daily/Notes', 'YYYY/MM/DD dddd', 'Daily/Notes/2026/03/09 Tuesday.md'], // weekday does not match
    ['Daily/Notes', 'YYYY/MM/DD dddd', 'Daily/Notes/2026/03/09 monday.md'], // case differs from what is written
    ['Daily/Notes', 'YYYY/MM/DD dddd', 'Daily/Notes/2026-03-09.md'],
    ['', 'YYYY-MM-DD', 'Journal/2026-03-09.md'],
    ['Daily', 'DD-MM-YYYY', 'Daily/2026-03-09.md'],
  ];
  it.each(notDaily)('%s + %s: %s is not a Daily note', (folder, format, p) => {
    expect(dateOfDailyNotePath(daily(folder, format), p)).toBeNull();
  });

  // Formats that do not give each day its own valid file name.
  it.each(['YYYY-MM', 'gggg-[W]ww', 'dddd', 'MM-DD', '../YYYY-MM-DD', 'YYYY//MM-DD', '/YYYY-MM-DD', 'YYYY-MM-DD\u0000'])('%s is not usable', (format) => {
    expect(isUsableDailyFormat('Journal', format)).toBe(false);
  });
});

describe('reading the settings files', () => {
  // [daily-notes.json content (undefined = no file), folder, format, template]
  const dailyCases: Array<[unknown, string, string, string | null]> = [
    [undefined, 'Journal', 'YYYY-MM-DD', null],
    ['not an object', 'Journal', 'YYYY-MM-DD', null],
    [{}, '', 'YYYY-MM-DD', null], // Obsidian: no folder = the vault root
    [{ folder: 'Daily/Notes', format: 'YYYY/MM/DD dddd', template: 'Templates/Daily' }, 'Daily/Notes', 'YYYY/MM/DD dddd', 'Templates/Daily.md'],
    [{ folder: '/Daily//Notes/', format: '  DD-MM-YYYY ' }, 'Daily/Notes', 'DD-MM-YYYY', null],
    [{ folder: 'Daily\\Notes' }, 'Daily/Notes', 'YYYY-MM-DD', null],
    [{ folder: '', format: '', template: '' }, '', 'YYYY-MM-DD', null],
    [{ folder: 7, format: ['x'], template: null }, '', 'YYYY-MM-DD', null],
    [{ folder: '../outside' }, '', 'YYYY-MM-DD', null],
    [{ folder: 'D', format: 'YYYY-MM' }, 'D', 'YYYY-MM-DD', null], // one file per month: not a Daily-note format
    [{ template: 'Templates/Daily.md' }, '', 'YYYY-MM-DD', 'Templates/Daily.md'],
    [{ template: '/Templates/Day' }, '', 'YYYY-MM-DD', 'Templates/Day.md'],
  ];
  it.each(dailyCases)('daily-notes.json %j', (json, folder, format, template) => {
    expect(parseDailyNotesSettings(json)).toEqual({ folder, format, template });
  });

  it.each([
    [undefined, 'Templates', 'YYYY-MM-DD', 'HH:mm'],
    [{}, 'Templates', 'YYYY-MM-DD', 'HH:mm'],
    [{ folder: 'Meta/Templates/' }, 'Meta/Templates', 'YYYY-MM-DD', 'HH:mm'],
    [{ folder: '/', dateFormat: 'DD.MM.YYYY', timeFormat: 'h:mm A' }, 'Templates', 'DD.MM.YYYY', 'h:mm A'],
    [{ folder: '../x' }, 'Templates', 'YYYY-MM-DD', 'HH:mm'],
  ])('templates.json %j', (json, folder, dateFormat, timeFormat) => {
    expect(parseTemplatesSettings(json)).toEqual({ folder, dateFormat, timeFormat });
  });

  it.each([
    [undefined, 'Attachments'],
    [{}, '/'],
    [{ attachmentFolderPath: './' }, './'],
    [{ attachmentFolderPath: 3 }, '/'],
  ])('app.json %j', (json, setting) => {
    expect(parseAppSettings(json).attachmentFolderPath).toBe(setting);
  });
});

describe('attachment folders (app.json attachmentFolderPath)', () => {
  // [setting, note path, folder ('' = the Home root; null = refused)]
  const cases: Array<[string, string, string | null]> = [
    ['Attachments', 'Daily/2026/03/09.md', 'Attachments'],
    ['/', 'Daily/2026/03/09.md', ''],
    ['', 'Daily/2026/03/09.md', ''],
    ['./', 'Daily/2026/03/09.md', 'Daily/2026/03'],
    ['.', 'Daily/2026/03/09.md', 'Daily/2026/03'],
    ['./', 'note.md', ''],
    ['./assets', 'Daily/2026/03/09.md', 'Daily/2026/03/assets'],
    ['./assets/img/', 'Daily/09.md', 'Daily/assets/img'],
    ['./assets', 'note.md', 'assets'],
    ['Files/Attachments/', 'a/b.md', 'Files/Attachments'],
    ['/Files', 'a/b.md', 'Files'],
    ['../outside', 'a/b.md', null],
    ['./../outside', 'a/b.md', null],
    ['./a/../../x', 'a/b.md', null],
  ];
  it.each(cases)('%j for %s → %j', (setting, note, folder) => {
    expect(attachmentFolderFor(setting, note)).toBe(folder);
  });
});

describe('Daily-note template variables', () => {
  const at = moment.utc('2026-03-09T14:35:20');
  // [template text, filled]
  const cases: Array<[string, string]> = [
    ['{{date}}', '2026/03/09 Monday'],
    ['{{ DATE }}', '2026/03/09 Monday'],
    ['{{title}}', '09 Monday'],
    ['{{time}}', '14:35'],
    ['{{date:YYYY-MM-DD}}', '2026-03-09'],
    ['{{time:HH:mm:ss}}', '14:35:20'],
    ['{{date:dddd, MMMM Do}}', 'Monday, March 9th'],
    ['{{date:[Week] w}}', 'Week 11'],
    ['{{yesterday}} / {{tomorrow}}', '2026/03/08 Sunday / 2026/03/10 Tuesday'],
    ['{{date+1d:YYYY-MM-DD}}', '2026-03-10'],
    ['{{date-1w:YYYY-MM-DD}}', '2026-03-02'],
    ['{{date+1M:YYYY-MM-DD}}', '2026-04-09'],
    ['{{date+1y}}', '2027/03/09 Tuesday'],
    ['{{unknown}} {{title:x}}', '{{unknown}} {{title:x}}'],
  ];
  it.each(cases)('%s → %s', (text, filled) => {
    expect(fillTemplate(text, '09 Monday', at, { dateFormat: 'YYYY/MM/DD dddd', daily: true })).toBe(filled);
  });

  it('note templates use templates.json formats and take no offsets', () => {
    const opts = { dateFormat: 'DD.MM.YYYY', timeFormat: 'h:mm A' };
    expect(fillTemplate('{{date}} {{time}} {{date:YYYY}} {{yesterday}} {{date+1d}}', 'T', at, opts)).toBe('09.03.2026 2:35 PM 2026 {{yesterday}} {{date+1d}}');
  });
});

describe('settings read from disk', () => {
  const roots: string[] = [];
  afterAll(() => roots.forEach((r) => fs.rmSync(r, { recursive: true, force: true })));

  it('follows the files as they appear, change and go away', async () => {
    const root = tempDir();
    roots.push(root);
    const file = (name: string, json: unknown) => {
      fs.mkdirSync(path.join(root, '.obsidian'), { recursive: true });
      fs.writeFileSync(path.join(root, '.obsidian', name), typeof json === 'string' ? json : JSON.stringify(json));
    };
    expect(await dailyNotesSettings(root)).toEqual(DEFAULT_DAILY);
    file('daily-notes.json', { folder: 'Daily', format: 'DD-MM-YYYY' });
    expect(await dailyNotesSettings(root)).toMatchObject({ folder: 'Daily', format: 'DD-MM-YYYY' });
    // Same size, new content: the mtime tells the change.
    file('daily-notes.json', { folder: 'Dayly', format: 'DD-MM-YYYY' });
    const later = new Date(Date.now() + 5000);
    fs.utimesSync(path.join(root, '.obsidian/daily-notes.json'), later, later);
    expect(await dailyNotesSettings(root)).toMatchObject({ folder: 'Dayly' });
    file('daily-notes.json', '{ "folder": "Daily", '); // half-written
    expect(await dailyNotesSettings(root)).toEqual(DEFAULT_DAILY);
    fs.rmSync(path.join(root, '.obsidian/daily-notes.json'));
    expect(await dailyNotesSettings(root)).toEqual(DEFAULT_DAILY);

    file('templates.json', { folder: 'Meta/Templates' });
    expect((await templatesSettings(root)).folder).toBe('Meta/Templates');
    file('app.json', { attachmentFolderPath: './files' });
    expect((await attachmentSettings(root)).attachmentFolderPath).toBe('./files');
  });

  it('ignores a settings folder that is a link out of the Home', async () => {
    const root = tempDir();
    const outside = tempDir();
    roots.push(root, outside);
    fs.writeFileSync(path.join(outside, 'daily-notes.json'), JSON.stringify({ folder: 'Elsewhere' }));
    fs.symlinkSync(outside, path.join(root, '.obsidian'));
    expect(await dailyNotesSettings(root)).toEqual(DEFAULT_DAILY);
  });
});
