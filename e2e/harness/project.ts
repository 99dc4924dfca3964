// The temporary copy of the project the real CLI works in: Pulumi never writes into the repository
// (`pulumi stack init` rewrites stack files). Everything at the repository root is copied except
// the folders below; node_modules is a symlink. The copy is layout-agnostic on purpose: whatever
// folders the program and the policy pack import from come along.
import * as fs from "node:fs";
import * as path from "node:path";
import { parse, parseDocument } from "yaml";

const NOT_COPIED = new Set([".git", "node_modules", "rendered", "bench", ".e2e", ".tools", ".preview", ".github", "test", "e2e", "coverage"]);

export function copyProject(repoRoot: string, dest: string): void {
  fs.mkdirSync(dest, { recursive: true });
  for (const e of fs.readdirSync(repoRoot, { withFileTypes: true })) {
    if (NOT_COPIED.has(e.name) || e.name.endsWith(".log")) continue;
    fs.cpSync(path.join(repoRoot, e.name), path.join(dest, e.name), { recursive: true, dereference: false });
  }
  fs.symlinkSync(path.join(repoRoot, "node_modules"), path.join(dest, "node_modules"));
}

/** The stack config dir of a project (Pulumi.yaml `stackConfigDir`, default the project dir). */
function stacksDir(project: string): string {
  const p = parse(fs.readFileSync(path.join(project, "Pulumi.yaml"), "utf8")) as Record<string, unknown>;
  return path.join(project, (p.stackConfigDir as string | undefined) ?? ".");
}

export function stackFile(project: string, stack: string): string {
  return path.join(stacksDir(project), `Pulumi.${stack}.yaml`);
}

/** Set (or delete, with undefined) one `openkeel:<key>` of a stack file, keeping comments and anchors. */
export function setStackConfig(file: string, key: string, value: unknown): void {
  const doc = parseDocument(fs.readFileSync(file, "utf8"));
  if (value === undefined) doc.deleteIn(["config", `openkeel:${key}`]);
  else doc.setIn(["config", `openkeel:${key}`], doc.createNode(value));
  fs.writeFileSync(file, doc.toString({ lineWidth: 0 }));
}

export function readStackConfig(file: string): Record<string, unknown> {
  return ((parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>).config ?? {}) as Record<string, unknown>;
}

/** Replace one `openkeel:<key>` of a stack file by what `mutate` makes of (a copy of) its value. */
export function mutateStackConfig(file: string, key: string, mutate: (v: unknown) => unknown): void {
  const cfg = readStackConfig(file);
  setStackConfig(file, key, mutate(structuredClone(cfg[`openkeel:${key}`])));
}
