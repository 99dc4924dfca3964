// The facts fixtures (test/fixtures/talos-facts/): each `<name>.machine.yaml` is the input of
// `talos-validate facts-example`, and `<name>.yaml` the facts file `npm run facts` would write from
// that machine's answers (Talos' own resource types print them: tools/talos-validate/facts.go).
import * as fs from "node:fs";
import * as path from "node:path";
import { parseAllDocuments } from "yaml";
import { FACT_RESOURCES, machineFactsText, parseMachineFacts, type MachineFacts } from "../../config/facts";
import { TALOS_VERSION } from "../../platform/versions";

export const FACTS_FIXTURES = path.resolve(__dirname, "../fixtures/talos-facts");
export const FACT_MACHINES = ["hypervisor-intel", "storage-amd"] as const;

/** The maintenance address each fixture machine answered on (what `npm run facts --address` was given). */
export const FACT_ADDRESSES: Record<(typeof FACT_MACHINES)[number], string> = { "hypervisor-intel": "10.30.99.21", "storage-amd": "10.40.99.31" };

/** A facts file's text from the one stream `facts-example` prints: its documents grouped as the four talosctl calls print them. */
export function factsFileFromStream(machine: (typeof FACT_MACHINES)[number], stream: string): string {
  const docs = stream.split(/^---\n/m);
  const outputs = FACT_RESOURCES.map((r) => ({
    alias: r.alias,
    yaml: docs.filter((d) => (parseAllDocuments(d)[0]?.toJS() as { metadata?: { type?: string } })?.metadata?.type === r.type).join("---\n"),
  }));
  return machineFactsText(machine, TALOS_VERSION, FACT_ADDRESSES[machine], outputs);
}

/** A fixture machine's facts, read by the repository's reader. */
export function fixtureFacts(name: (typeof FACT_MACHINES)[number], machine: string = name): MachineFacts {
  const file = path.join(FACTS_FIXTURES, `${name}.yaml`);
  const r = parseMachineFacts(fs.readFileSync(file, "utf8"), file, machine);
  if (Array.isArray(r)) throw new Error(`fixture ${file}: ${JSON.stringify(r)}`);
  return r;
}
