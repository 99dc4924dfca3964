// npm run docs: writes the generated parts of docs/ from the code they describe: the table of
// docs/platform.md from each platform component's `docs` rows (platform/docs-row.ts), in the order
// production lists them (then what only the lab installs). test/repository/docs-tables.test.ts fails while the file differs.
import * as fs from "node:fs";
import * as path from "node:path";
import { helpOnly, type Io } from "../cli/cli";
import { EXIT_BAD_CONFIG, UserError } from "../cli/errors";
import { environmentComponents } from "../environments/registry";
import { OPENKEEL } from "../openkeel/descriptor";
import { platformTable, withPlatformTable } from "../platform/docs-row";
import { REPO_ROOT } from "./tools";

export const PLATFORM_DOC = "docs/platform.md";

/** docs/platform.md as npm run docs writes it, from the text it has. */
export function platformDoc(text: string): string {
  const doc = withPlatformTable(text, platformTable(environmentComponents("talos-production", "kind-lab").filter((c) => c !== OPENKEEL)));
  if (doc === undefined)
    throw new UserError(
      `${PLATFORM_DOC}: the markers of its generated table are missing. Fix: restore them from git (git checkout -- ${PLATFORM_DOC})`,
      EXIT_BAD_CONFIG,
    );
  return doc;
}

export function docsCommand(argv: string[], io: Io, root = REPO_ROOT): number {
  helpOnly(argv);
  const file = path.join(root, PLATFORM_DOC);
  const text = fs.readFileSync(file, "utf8");
  const doc = platformDoc(text);
  if (doc !== text) fs.writeFileSync(file, doc);
  io.out(`${PLATFORM_DOC}: ${doc === text ? "up to date" : "written"}\n`);
  return 0;
}
