// A strict, small XML parser for tests: enough to prove a rendered SVG is well-formed (one root,
// balanced tags, quoted attributes, known entities) and to walk its elements.
export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: (XmlElement | string)[];
  descendants(): XmlElement[];
  text(): string;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function decode(s: string, where: number): string {
  return s.replace(/&([^;]*);|&/g, (m, name: string | undefined) => {
    if (name === undefined) throw new Error(`bare & at ${where}`);
    if (name in ENTITIES) return ENTITIES[name];
    if (/^#\d+$/.test(name)) return String.fromCodePoint(Number(name.slice(1)));
    if (/^#x[0-9a-fA-F]+$/.test(name)) return String.fromCodePoint(parseInt(name.slice(2), 16));
    throw new Error(`unknown entity ${m} at ${where}`);
  });
}

function element(name: string, attrs: Record<string, string>): XmlElement {
  const e: XmlElement = {
    name,
    attrs,
    children: [],
    descendants() {
      return e.children.flatMap((c) => (typeof c === "string" ? [] : [c, ...c.descendants()]));
    },
    text() {
      return e.children.map((c) => (typeof c === "string" ? c : "")).join("");
    },
  };
  return e;
}

export function parseXml(src: string): XmlElement {
  let i = 0;
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  const NAME = /[A-Za-z_:][-A-Za-z0-9_.:]*/y;
  const readName = () => {
    NAME.lastIndex = i;
    const m = NAME.exec(src);
    if (!m) throw new Error(`expected a name at ${i}`);
    i += m[0].length;
    return m[0];
  };
  const skipWs = () => {
    while (i < src.length && /\s/.test(src[i])) i++;
  };
  if (src.startsWith("<?xml")) {
    const end = src.indexOf("?>");
    if (end < 0) throw new Error("unterminated XML declaration");
    i = end + 2;
  }
  while (i < src.length) {
    if (src.startsWith("<!--", i)) {
      const end = src.indexOf("-->", i);
      if (end < 0) throw new Error(`unterminated comment at ${i}`);
      i = end + 3;
    } else if (src.startsWith("</", i)) {
      i += 2;
      const name = readName();
      skipWs();
      if (src[i] !== ">") throw new Error(`expected > at ${i}`);
      i++;
      const open = stack.pop();
      if (!open || open.name !== name) throw new Error(`</${name}> closes <${open?.name ?? "nothing"}> at ${i}`);
    } else if (src[i] === "<") {
      i++;
      const name = readName();
      const attrs: Record<string, string> = {};
      for (;;) {
        skipWs();
        if (src.startsWith("/>", i) || src[i] === ">") break;
        const attr = readName();
        skipWs();
        if (src[i] !== "=") throw new Error(`attribute ${attr} without value at ${i}`);
        i++;
        skipWs();
        const q = src[i];
        if (q !== '"' && q !== "'") throw new Error(`unquoted attribute ${attr} at ${i}`);
        const end = src.indexOf(q, i + 1);
        if (end < 0) throw new Error(`unterminated attribute ${attr}`);
        const raw = src.slice(i + 1, end);
        if (raw.includes("<")) throw new Error(`< in attribute ${attr} at ${i}`);
        if (attr in attrs) throw new Error(`duplicate attribute ${attr} at ${i}`);
        attrs[attr] = decode(raw, i);
        i = end + 1;
      }
      const e = element(name, attrs);
      if (stack.length > 0) stack[stack.length - 1].children.push(e);
      else if (root) throw new Error(`second root element <${name}>`);
      else root = e;
      if (src.startsWith("/>", i)) i += 2;
      else {
        i++;
        stack.push(e);
      }
    } else {
      const next = src.indexOf("<", i);
      const text = src.slice(i, next < 0 ? src.length : next);
      if (stack.length === 0) {
        if (text.trim() !== "") throw new Error(`text outside the root at ${i}`);
      } else stack[stack.length - 1].children.push(decode(text, i));
      i = next < 0 ? src.length : next;
    }
  }
  if (stack.length > 0) throw new Error(`unclosed <${stack[stack.length - 1].name}>`);
  if (!root) throw new Error("no root element");
  return root;
}
