// npm run docs in-process on a copy of the documents it writes: a stale table is written, the rest of
// the file kept; a document without its markers stops the command before it writes anything.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { capture } from "../../cli/cli";
import { docsCommand, GENERATED_TABLES, RELEASES_TABLE } from "../../tools/docs-command";
import { REPO } from "../helpers/stacks";

const roots: string[] = [];
afterEach(() => roots.splice(0).forEach((r) => fs.rmSync(r, { recursive: true, force: true })));

/** A root holding the documents as the repository has them, each changed by `edit`. */
function copyOfDocs(edit: (file: string, text: string) => string = (_, t) => t): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-docs-"));
  roots.push(root);
  for (const { file } of GENERATED_TABLES) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), edit(file, fs.readFileSync(path.join(REPO, file), "utf8")));
  }
  return root;
}
const read = (root: string, file: string) => fs.readFileSync(path.join(root, file), "utf8");

describe("npm run docs", () => {
  it("says each document is up to date when it is, and writes nothing", async () => {
    const root = copyOfDocs();
    const r = await capture((argv, io) => docsCommand(argv, io, root), []);
    expect(r).toEqual({ code: 0, stdout: GENERATED_TABLES.map((t) => `${t.file}: up to date\n`).join(""), stderr: "" });
  });

  it("writes a stale table back from the descriptors, and only the stale one", async () => {
    const stale = (file: string, text: string) =>
      file === RELEASES_TABLE.file ? text.replace("| `openkeel-keystone` |", "| `openkeel-keystone-old` |") : text;
    const root = copyOfDocs(stale);
    const r = await capture((argv, io) => docsCommand(argv, io, root), []);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${RELEASES_TABLE.file}: written\n`);
    for (const { file } of GENERATED_TABLES) expect(read(root, file), file).toBe(fs.readFileSync(path.join(REPO, file), "utf8"));
  });

  it("stops on a document without its markers, naming it and the fix, and writes neither", async () => {
    const broken = (file: string, text: string) =>
      file === RELEASES_TABLE.file
        ? text.replace("<!-- end of the table written by npm run docs -->", "")
        : text.replace("| cert-manager |", "| cert-manager-old |");
    const root = copyOfDocs(broken);
    const before = GENERATED_TABLES.map(({ file }) => read(root, file));
    const r = await capture((argv, io) => docsCommand(argv, io, root), []);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `${RELEASES_TABLE.file}: the markers of its generated table are missing. Fix: restore them from git (git checkout -- ${RELEASES_TABLE.file})\n`,
    );
    expect(GENERATED_TABLES.map(({ file }) => read(root, file))).toEqual(before);
  });
});
