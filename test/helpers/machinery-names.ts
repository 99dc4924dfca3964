// The names test's reading of a source file (test/repository/machinery-names.test.ts, issue 47 item
// 2): which words an identifier or a string literal holds, and a service's name in them. Shared with
// test/platform/adding-a-component.test.ts, which holds a new component's module to the same rule.
import ts from "typescript";

/** The layers a service or component plugs into, and the review tooling that judges their changes. */
export const MACHINERY = ["config", "topology", "plan", "placement", "render", "lifecycle", "platform", "openkeel", "review"];

export const words = (text: string) =>
  text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);

export interface Name {
  name: string;
  /** Whether a file is its own module. */
  own: (file: string) => boolean;
  /** Whether an identifier or a string literal holds it. */
  in: (token: Token) => boolean;
}

export interface Token {
  text: string;
  literal: boolean;
}

/** Whether some run of the words, joined, is the key: `kube-ovn`, `KubeOVN` and `KUBE_OVN` all hold `kubeovn`. */
export function holds(text: string, key: string): boolean {
  const w = words(text);
  for (let i = 0; i < w.length; i++) {
    let joined = "";
    for (let j = i; j < w.length && joined.length < key.length; j++) {
      joined += w[j];
      if (joined === key) return true;
    }
  }
  return false;
}

/**
 * Whether a node is a component's rows of docs/platform.md (`docs: [...]`, or a `*_DOCS` constant
 * handed to it: platform/docs-row.ts): prose for a reader, like a comment, that nothing runs on.
 */
function isDocsProse(node: ts.Node): boolean {
  if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name)) return node.name.text === "docs";
  return ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text.endsWith("_DOCS");
}

/** The identifiers and string literals of a file's source (a template's texts, an import's path), comments and docs prose left out. */
export function tokens(file: string, text: string): Token[] {
  const out: Token[] = [];
  const visit = (node: ts.Node): void => {
    if (isDocsProse(node)) return;
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) out.push({ text: node.text, literal: false });
    else if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) out.push({ text: node.text, literal: true });
    node.forEachChild(visit);
  };
  visit(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true));
  return out;
}

/**
 * Each service's name as the rule reads it: in any spelling; a name that is a word of the
 * machinery's own vocabulary (the service `placement`) only as its release `openkeel-<name>`.
 */
export function serviceNames(services: readonly { name: string }[]): Name[] {
  const vocabulary = new Set(MACHINERY);
  const release = (name: string) => new RegExp(`(^|[^a-z0-9-])openkeel-${name}($|[^a-z0-9-])`);
  return services.map((s): Name => ({
    name: s.name,
    own: (file) => file === `openkeel/services/${s.name}.ts`,
    in: vocabulary.has(s.name) ? (t) => t.literal && release(s.name).test(t.text) : (t) => holds(t.text, words(s.name).join("")),
  }));
}
