/**
 * WebDAV XML both ways. Requests: fast-xml-parser reads the body, then each
 * element's prefix is resolved against its `xmlns` declarations, because
 * clients pick any prefixes they like (`D:`, `d:`, `A:`, none). Responses: a
 * small writer with fixed prefixes for the namespaces Quire speaks and
 * generated ones for any other (a property asked for in an unknown namespace
 * is answered 404 in that namespace). Pure functions (docs/caldav.md, "XML").
 */
import { createRequire } from 'node:module';
import type { XMLParser } from 'fast-xml-parser';

export const NS = {
  dav: 'DAV:',
  caldav: 'urn:ietf:params:xml:ns:caldav',
  cs: 'http://calendarserver.org/ns/',
  apple: 'http://apple.com/ns/ical/',
  quire: 'urn:quire:dav',
} as const;

const PREFIX: Record<string, string> = { [NS.dav]: 'd', [NS.caldav]: 'c', [NS.cs]: 'cs', [NS.apple]: 'ical', [NS.quire]: 'q' };

/** An element with its namespace resolved. */
export interface XmlNode {
  ns: string;
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
  text: string;
}

/** `{ns}name`, the key properties and elements are compared by. */
export const qname = (ns: string, name: string) => `{${ns}}${name}`;
export const keyOf = (n: { ns: string; name: string }) => qname(n.ns, n.name);

export class XmlError extends Error {}

/**
 * fast-xml-parser loads at the first request body, not when the server
 * starts (docs/performance.md, "Start-up"); through its CommonJS build, so
 * that parseXml stays synchronous.
 */
const require = createRequire(import.meta.url);
let loaded: { parser: XMLParser; validator: typeof import('fast-xml-parser').XMLValidator } | null = null;
function xmlLib() {
  if (!loaded) {
    const { XMLParser, XMLValidator } = require('fast-xml-parser') as typeof import('fast-xml-parser');
    const parser = new XMLParser({
      preserveOrder: true,
      ignoreAttributes: false,
      attributeNamePrefix: '',
      // Entities are decoded below (the five predefined and character references only).
      processEntities: false,
      parseTagValue: false,
      parseAttributeValue: false,
      trimValues: true,
    });
    loaded = { parser, validator: XMLValidator };
  }
  return loaded;
}

const ENTITY: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (m, e: string) => {
    if (e[0] === '#') {
      const cp = e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : m;
    }
    return ENTITY[e] ?? m;
  });
}

type Raw = Record<string, unknown>;

function convert(raw: Raw, scope: Record<string, string>): XmlNode | null {
  const tag = Object.keys(raw).find((k) => k !== ':@');
  if (tag === undefined || tag === '#text' || tag.startsWith('?') || tag.startsWith('!')) return null;
  const rawAttrs = (raw[':@'] ?? {}) as Record<string, string>;
  let ns = scope;
  const attrs: Record<string, string> = {};
  for (const [k, v] of Object.entries(rawAttrs)) {
    if (k === 'xmlns' || k.startsWith('xmlns:')) {
      if (ns === scope) ns = { ...scope };
      ns[k === 'xmlns' ? '' : k.slice(6)] = decodeEntities(String(v));
    } else {
      attrs[k.includes(':') ? k.slice(k.indexOf(':') + 1) : k] = decodeEntities(String(v));
    }
  }
  const colon = tag.indexOf(':');
  const prefix = colon < 0 ? '' : tag.slice(0, colon);
  const uri = ns[prefix];
  if (uri === undefined && prefix !== '') throw new XmlError(`undeclared namespace prefix "${prefix}"`);
  const node: XmlNode = { ns: uri ?? '', name: colon < 0 ? tag : tag.slice(colon + 1), attrs, children: [], text: '' };
  for (const child of (raw[tag] as Raw[]) ?? []) {
    if ('#text' in child) node.text += decodeEntities(String(child['#text']));
    else {
      const c = convert(child, ns);
      if (c) node.children.push(c);
    }
  }
  return node;
}

/** The document element of a request body, namespaces resolved; XmlError for anything that is not well-formed XML. */
export function parseXml(body: string): XmlNode {
  // Requests never need a DTD; refusing one rules out entity expansion attacks.
  if (/<!DOCTYPE|<!ENTITY/i.test(body)) throw new XmlError('a DTD is not allowed in a request body');
  const { parser, validator } = xmlLib();
  const valid = validator.validate(body);
  if (valid !== true) throw new XmlError(`${valid.err.msg} (line ${valid.err.line})`);
  let doc: Raw[];
  try {
    doc = parser.parse(body) as Raw[];
  } catch (e) {
    // The parser's own limits (nesting depth) throw plain Errors.
    throw new XmlError((e as Error).message);
  }
  for (const raw of doc) {
    const n = convert(raw, {});
    if (n) return n;
  }
  throw new XmlError('the body has no XML element');
}

export const child = (n: XmlNode | undefined, ns: string, name: string): XmlNode | undefined =>
  n?.children.find((c) => c.ns === ns && c.name === name);
export const children = (n: XmlNode | undefined, ns: string, name: string): XmlNode[] =>
  n ? n.children.filter((c) => c.ns === ns && c.name === name) : [];

// ---------------------------------------------------------------- writing

export const escapeXml = (s: string) => s.replace(/[&<>"]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&quot;'));

/** Prefixes for one response: the fixed ones, and `x0`, `x1`, … for namespaces clients brought. */
export class Prefixes {
  private readonly extra = new Map<string, string>();

  of(ns: string): string {
    const fixed = PREFIX[ns];
    if (fixed !== undefined) return fixed;
    let p = this.extra.get(ns);
    if (p === undefined) this.extra.set(ns, (p = `x${this.extra.size}`));
    return p;
  }

  /** The xmlns declarations for the document element. */
  declarations(): string {
    let out = '';
    for (const [ns, p] of Object.entries(PREFIX)) out += ` xmlns:${p}="${escapeXml(ns)}"`;
    for (const [ns, p] of this.extra) out += ` xmlns:${p}="${escapeXml(ns)}"`;
    return out;
  }
}

/** A property's value as XML: text (escaped when written) or already-built inner XML. */
export type PropValue = { text: string } | { xml: string };

/** `<p:name>value</p:name>`, or the empty element. */
export function element(px: Prefixes, ns: string, name: string, inner = ''): string {
  const tag = `${px.of(ns)}:${name}`;
  return inner === '' ? `<${tag}/>` : `<${tag}>${inner}</${tag}>`;
}

const STATUS: Record<number, string> = {
  200: 'OK',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  424: 'Failed Dependency',
  507: 'Insufficient Storage',
};
export const statusLine = (code: number) => `HTTP/1.1 ${code} ${STATUS[code] ?? ''}`.trimEnd();

export interface PropResult {
  ns: string;
  name: string;
  status: number;
  value?: PropValue;
}

/**
 * One `<d:response>`: an href with its properties grouped by status, or (for
 * a member that is gone, or a whole-resource answer) an href and a status.
 */
export function responseXml(px: Prefixes, href: string, props: PropResult[] | { status: number }): string {
  let inner = element(px, NS.dav, 'href', escapeXml(href));
  if (!Array.isArray(props)) return element(px, NS.dav, 'response', inner + element(px, NS.dav, 'status', statusLine(props.status)));
  const byStatus = new Map<number, string>();
  for (const p of props) {
    const v = p.value === undefined ? '' : 'text' in p.value ? escapeXml(p.value.text) : p.value.xml;
    byStatus.set(p.status, (byStatus.get(p.status) ?? '') + element(px, p.ns, p.name, v));
  }
  for (const [status, xml] of byStatus) {
    inner += element(px, NS.dav, 'propstat', element(px, NS.dav, 'prop', xml) + element(px, NS.dav, 'status', statusLine(status)));
  }
  return element(px, NS.dav, 'response', inner);
}

/** The whole document: `responses` are `responseXml` strings built with the same `px`. */
export function multistatus(px: Prefixes, responses: string[], extra = ''): string {
  const body = responses.join('') + extra;
  // Declarations come last: the responses may have added prefixes while being built.
  return `<?xml version="1.0" encoding="utf-8"?>\n<d:multistatus${px.declarations()}>${body}</d:multistatus>`;
}

/** A `<d:error>` body naming the precondition that failed, with a readable message. */
export function errorXml(ns: string, name: string, message: string, inner = ''): string {
  const px = new Prefixes();
  const body = element(px, ns, name, inner) + element(px, NS.quire, 'message', escapeXml(message));
  return `<?xml version="1.0" encoding="utf-8"?>\n<d:error${px.declarations()}>${body}</d:error>`;
}
