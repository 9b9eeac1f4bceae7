import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import {
  blankScene,
  isCanvasNote,
  parseCanvasNote,
  renderCanvasNote,
  replaceScene,
  sceneJson,
} from '../../src/canvas/excalidraw-file.js';
import { CanvasInputError, CanvasNoteError, type ExcalidrawScene } from '../../src/canvas/types.js';
import { el, sampleScene } from './fixtures.js';

function noteError(fn: () => unknown): CanvasNoteError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(CanvasNoteError);
    return e as CanvasNoteError;
  }
  throw new Error('expected a CanvasNoteError');
}

/** A note laid out the way the Obsidian Excalidraw plugin (2.x, uncompressed) saves one. */
function pluginNote(scene: ExcalidrawScene, eol = '\n'): string {
  return [
    '---',
    '',
    'excalidraw-plugin: parsed',
    'tags: [excalidraw]',
    '',
    '---',
    '==⚠  Switch to EXCALIDRAW VIEW in the MORE OPTIONS menu of this document. ⚠== You can decompress Drawing data with the command palette: \'Decompress current Excalidraw file\'. For more info check in plugin settings under \'Saving\'',
    '',
    '# Back of the card',
    'Some notes *about* the drawing, with a [[Link]].',
    '',
    '# Excalidraw Data',
    '## Text Elements',
    'Hello <world> & "you"',
    'second line ^text0001',
    '',
    '## Element Links',
    'rect0001: [[Other note]]',
    '',
    '## Embedded Files',
    '0a1b2c3d4e5f: [[Pasted Image 20240101.png]]',
    '',
    '%%',
    '## Drawing',
    '```json',
    JSON.stringify(scene, null, '\t'),
    '```',
    '%%',
  ]
    .join('\n')
    .replace(/\n/g, eol);
}

describe('renderCanvasNote', () => {
  it('writes the plugin layout with frontmatter, text elements and a json drawing block', () => {
    const md = renderCanvasNote({ title: 'Whiteboard', id: 'n_123', scene: sampleScene() });
    expect(md.startsWith('---\nexcalidraw-plugin: parsed\ntags: [excalidraw]\nid: n_123\ntitle: Whiteboard\n---\n')).toBe(true);
    expect(md).toContain('\n# Excalidraw Data\n## Text Elements\nHello <world> & "you"\nsecond line ^text0001\n\n%%\n## Drawing\n```json\n{\n\t"type": "excalidraw",');
    expect(md.endsWith('\n```\n%%\n')).toBe(true);
    const { scene, frontmatter, textElements } = parseCanvasNote(md);
    expect(scene).toEqual(sampleScene());
    expect(frontmatter).toEqual({ 'excalidraw-plugin': 'parsed', tags: ['excalidraw'], id: 'n_123', title: 'Whiteboard' });
    expect(textElements).toEqual([{ id: 'text0001', text: 'Hello <world> & "you"\nsecond line' }]);
  });

  it('renders a blank scene when none is given', () => {
    const md = renderCanvasNote({ title: 'Empty', id: 'x' });
    expect(md).toContain('## Text Elements\n%%\n## Drawing\n```json\n');
    expect(parseCanvasNote(md).scene).toEqual(blankScene());
  });

  it('quotes titles and ids that YAML would misread, and adds extra tags', () => {
    for (const title of ['a: b', 'true', '123', '#hash', "it's \"quoted\"", '- dash', '[x]', 'ünï 日本']) {
      const md = renderCanvasNote({ title, id: '0042', tags: ['#plan', 'work/q1'] });
      const { frontmatter } = parseCanvasNote(md);
      expect(frontmatter['title']).toBe(title);
      expect(frontmatter['id']).toBe('0042');
      expect(frontmatter['tags']).toEqual(['excalidraw', 'plan', 'work/q1']);
    }
  });

  it('lists only live text elements with 8-character block ids', () => {
    const scene = blankScene();
    scene.elements = [
      el('text', { id: 'abcd1234', text: 'kept', rawText: 'kept [[raw]]' }),
      el('text', { id: 'abcd1235', text: 'gone', isDeleted: true }),
      el('text', { id: 'a-much-longer-excalidraw-id', text: 'json only' }),
      el('rectangle', { id: 'rect1234' }),
    ];
    const md = renderCanvasNote({ title: 't', id: 'i', scene });
    expect(md).toContain('## Text Elements\nkept [[raw]] ^abcd1234\n\n%%\n');
    expect(md).not.toContain('^abcd1235');
    expect(md).not.toContain('json only ^');
  });

  it('validates its input', () => {
    expect(() => renderCanvasNote({ title: 't', id: '' })).toThrow(CanvasInputError);
    expect(() => renderCanvasNote({ title: 3 as never, id: 'x' })).toThrow(/title must be a string/);
    expect(() => renderCanvasNote({ title: 't', id: 'x', scene: { elements: 'no' } })).toThrow(/scene.elements must be an array/);
    expect(() => renderCanvasNote({ title: 't', id: 'x', scene: { elements: [{ id: 'a', version: -1, versionNonce: 0 }] } })).toThrow(
      /scene.elements\[0\]\.version/,
    );
    expect(() => renderCanvasNote({ title: 't', id: 'x', scene: { type: 'other', elements: [] } })).toThrow(/scene.type/);
  });
});

describe('parseCanvasNote', () => {
  it('reads a note in the plugin layout', () => {
    const md = pluginNote(sampleScene());
    const { scene, frontmatter, textElements } = parseCanvasNote(md);
    expect(scene).toEqual(sampleScene());
    expect(frontmatter['excalidraw-plugin']).toBe('parsed');
    expect(textElements).toEqual([{ id: 'text0001', text: 'Hello <world> & "you"\nsecond line' }]);
    expect(isCanvasNote(md)).toBe(true);
  });

  it('reads the old layout (# Text Elements / # Drawing) and CRLF files', () => {
    const json = JSON.stringify(sampleScene(), null, '\t');
    const old = `---\nexcalidraw-plugin: raw\n---\n# Text Elements\nhi ^text0001\n\n%%\n# Drawing\n\`\`\`json\n${json}\n\`\`\`\n%%`;
    expect(parseCanvasNote(old).scene).toEqual(sampleScene());
    expect(parseCanvasNote(pluginNote(sampleScene(), '\r\n')).scene).toEqual(sampleScene());
  });

  it('reads the legacy unfenced one-line JSON', () => {
    const md = `---\nexcalidraw-plugin: parsed\n---\n# Drawing\n${JSON.stringify(sampleScene())}%%`;
    expect(parseCanvasNote(md).scene).toEqual(sampleScene());
  });

  it('takes the last "## Drawing" heading, so a text element cannot fake one', () => {
    const scene = sampleScene();
    scene.elements.push(el('text', { id: 'fake1234', text: '## Drawing\n```json\n{"type":"excalidraw","elements":[]}\n```' }));
    const md = renderCanvasNote({ title: 't', id: 'i', scene });
    expect(parseCanvasNote(md).scene).toEqual(scene);
    expect(replaceScene(md, scene)).toBe(md);
  });

  it('fills missing appState and files', () => {
    const md = `---\nexcalidraw-plugin: parsed\n---\n## Drawing\n\`\`\`json\n{"type":"excalidraw","version":2,"source":"s","elements":[]}\n\`\`\`\n`;
    expect(parseCanvasNote(md).scene).toEqual({ type: 'excalidraw', version: 2, source: 's', elements: [], appState: {}, files: {} });
  });

  it('refuses notes that are not canvases', () => {
    expect(noteError(() => parseCanvasNote('# Just a note\n\ntext')).reason).toBe('not_canvas');
    expect(noteError(() => parseCanvasNote('---\ntitle: x\n---\n## Drawing\n```json\n{}\n```\n')).reason).toBe('not_canvas');
    expect(noteError(() => parseCanvasNote('---\n: : [\n---\n')).reason).toBe('not_canvas');
    expect(noteError(() => parseCanvasNote(42 as never)).reason).toBe('not_canvas');
    expect(isCanvasNote('# plain')).toBe(false);
  });

  it('explains compressed-json, a missing drawing and broken JSON', () => {
    const compressed = '---\nexcalidraw-plugin: parsed\n---\n# Excalidraw Data\n## Text Elements\n%%\n## Drawing\n```compressed-json\nN4KAkARALgngDgUwgLgAQQQDwMYEMA2AlgCYBOuA7hADTgQBuCpAzoQPYB2KqATLZMzYBXUtiRoIACyhQ4zZAHoFAc0JRJQgEYA6bGwC2CgF7N6hbEcK4OCtptbErHALRY8RMpWdx8Q1TdIEfARcZgRmBShcZQUebQBmbQAGGjoghH0EDihmbgBtcDBQMBKIEm4IAEEAWQALDIA1AGoAJQBJAEYAYQAFAH0ADgBlAAkYAFUADQ\n```\n%%';
    const err = noteError(() => parseCanvasNote(compressed));
    expect(err.reason).toBe('compressed_unsupported');
    expect(err.message).toMatch(/compressed-json/);
    expect(err.message).toMatch(/Decompress current Excalidraw file/);
    expect(err.status).toBe(400);
    expect(noteError(() => parseCanvasNote('---\nexcalidraw-plugin: parsed\n---\n# hi\n')).reason).toBe('no_drawing');
    expect(noteError(() => parseCanvasNote('---\nexcalidraw-plugin: parsed\n---\n## Drawing\n```json\n{"type":\n')).reason).toBe('no_drawing');
    expect(noteError(() => parseCanvasNote('---\nexcalidraw-plugin: parsed\n---\n## Drawing\n```json\n{"type": nope}\n```\n')).reason).toBe(
      'invalid_json',
    );
    expect(
      noteError(() => parseCanvasNote('---\nexcalidraw-plugin: parsed\n---\n## Drawing\n```json\n{"elements":[{"id":1}]}\n```\n')).reason,
    ).toBe('invalid_scene');
  });
});

describe('replaceScene', () => {
  it('is byte-identical when the scene is unchanged (our notes and plugin notes, LF and CRLF)', () => {
    const ours = renderCanvasNote({ title: 'W', id: '1', scene: sampleScene() });
    expect(replaceScene(ours, parseCanvasNote(ours).scene)).toBe(ours);
    for (const eol of ['\n', '\r\n']) {
      const theirs = pluginNote(sampleScene(), eol);
      expect(replaceScene(theirs, parseCanvasNote(theirs).scene)).toBe(theirs);
    }
  });

  it('rewrites only the JSON block and the Text Elements entries', () => {
    const before = pluginNote(sampleScene());
    const scene = sampleScene();
    scene.elements.push(el('text', { id: 'new12345', text: 'Fresh text' }));
    scene.elements[0]!.version = 9;
    const after = replaceScene(before, scene);
    expect(parseCanvasNote(after).scene).toEqual(scene);

    const head = before.slice(0, before.indexOf('## Text Elements\n') + '## Text Elements\n'.length);
    expect(after.startsWith(head)).toBe(true);
    expect(after).toContain('## Text Elements\nHello <world> & "you"\nsecond line ^text0001\n\nFresh text ^new12345\n\n## Element Links\n');
    const links = before.slice(before.indexOf('## Element Links'), before.indexOf('```json\n') + '```json\n'.length);
    expect(after).toContain(links);
    expect(after.endsWith('\n```\n%%')).toBe(true);
    expect(after).toContain(sceneJson(scene));
  });

  it('keeps CRLF line endings in what it writes', () => {
    const before = pluginNote(sampleScene(), '\r\n');
    const scene = sampleScene();
    scene.elements.push(el('text', { id: 'new12345', text: 'two\nlines' }));
    const after = replaceScene(before, scene);
    expect(after.replace(/\r\n/g, '')).not.toContain('\n');
    expect(after).toContain('two\r\nlines ^new12345\r\n\r\n');
    expect(parseCanvasNote(after).scene).toEqual(scene);
  });

  it('keeps a legacy unfenced block on one line', () => {
    const md = `---\nexcalidraw-plugin: parsed\n---\n# Drawing\n${JSON.stringify(sampleScene())}%%`;
    const scene = sampleScene();
    scene.elements.pop();
    const after = replaceScene(md, scene);
    expect(after).toBe(`---\nexcalidraw-plugin: parsed\n---\n# Drawing\n${JSON.stringify(scene)}%%`);
  });

  it('leaves a note without a Text Elements section without one', () => {
    const md = `---\nexcalidraw-plugin: parsed\n---\nbody\n## Drawing\n\`\`\`json\n${sceneJson(blankScene())}\n\`\`\`\n`;
    const scene = sampleScene();
    const after = replaceScene(md, scene);
    expect(after).toBe(`---\nexcalidraw-plugin: parsed\n---\nbody\n## Drawing\n\`\`\`json\n${sceneJson(scene)}\n\`\`\`\n`);
  });

  it('refuses what parseCanvasNote refuses and bad scenes', () => {
    expect(() => replaceScene('# plain', blankScene())).toThrow(CanvasNoteError);
    expect(() => replaceScene(renderCanvasNote({ title: 't', id: 'i' }), { elements: [{ id: 'a' }] })).toThrow(CanvasInputError);
  });

  it('round-trips the frontmatter YAML untouched', () => {
    const md = pluginNote(sampleScene());
    const fm = md.slice(0, md.indexOf('\n---\n', 4) + 5);
    expect(replaceScene(md, blankScene()).startsWith(fm)).toBe(true);
    expect(parseYaml(fm.replace(/---/g, ''))).toEqual({ 'excalidraw-plugin': 'parsed', tags: ['excalidraw'] });
  });
});
