// Issue 47 item 2: the shared machinery names no single OpenKeel service nor platform component;
// what is one service's or one component's lives in its own module, reached through the hooks of
// its descriptor (openkeel/service.ts, platform/component.ts).
//
// - The names: every service of the registry (openkeel/services/index.ts), and every platform
//   component some environment installs (environments/registry.ts), by its module's file name
//   (platform/<module>.ts, the file that exports its descriptor: `kube-ovn`, `mariadb-operator`;
//   its display name is prose, "Medik8s (NHC, SNR, NMO) on OLM"). OpenKeel, the last entry of the
//   platform list, is the project itself, not a name to keep out.
// - A name appears where an identifier or a string literal (a template's text, an import path)
//   holds its words in a row, in any spelling: `swiftFindings`, `KUBE_OVN`, "Kube-OVN",
//   "openkeel:services.ironic.bmcNetworks", `../platform/longhorn`. Comments do not count: they cite
//   the design, which names services as its examples (§ 2.2 "the Ironic conductor"), and nothing
//   runs on them; nor does a component's prose for docs/platform.md (its `docs` rows), for the same
//   reason. A name that is a word of the machinery's own vocabulary (the service `placement`:
//   the folder placement/, every `placement` value) counts only in its service's unmistakable form,
//   its release `openkeel-<name>`.
// - The machinery: the source of the layers a service or component plugs into and of the review
//   tooling that judges their changes: config/, topology/, plan/, placement/, render/, lifecycle/,
//   platform/, openkeel/, review/.
// - Its own module: a service's `openkeel/services/<name>.ts`; a component's `platform/<module>.ts`
//   and the files beside it named `<module>-*.ts` (platform/medik8s-rule.ts is Medik8s'). A
//   service's module may name what it builds on, other services and components (Ironic's
//   provisioning network is a Kube-OVN Subnet), and the registry lists every service: neither is
//   read. A component's module may name the components it builds on (Longhorn's storage network is
//   a Multus attachment), never a service, which sits above it: it is read for the services' names.
//   The pins' registry (platform/versions.ts and its rules, PIN_REGISTRY below) names what each pin
//   is of, as the services' registry does: not read.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { environmentComponents } from "../../environments/registry";
import { OPENKEEL } from "../../openkeel/descriptor";
import { OPENKEEL_SERVICES } from "../../openkeel/services";
import { holds, MACHINERY, serviceNames, tokens, words, type Name, type Token } from "../helpers/machinery-names";
import { REPO } from "../helpers/stacks";

/** The registry of the services, which lists them by name. */
const REGISTRY = "openkeel/services/index.ts";

/**
 * The registry of the pins, which names what each pins: every version in one place (the standard;
 * Renovate reads that one file), with each pin's upgrade rule beside it in a file of its own, both
 * read alone at any commit by the preview and the deploy gate (type-only imports:
 * review/preview-command.ts checkoutPins). A component's descriptor carries its pins by reference
 * (`pins`); spreading the pins into the twelve modules would undo all three, so these two files are
 * a registry like the services', not machinery, by decision (issue 47).
 */
const PIN_REGISTRY = ["platform/versions.ts", "platform/upgrade-rules.ts"];

function sources(dir: string): string[] {
  return (fs.readdirSync(path.join(REPO, dir), { recursive: true }) as string[])
    .filter((f) => f.endsWith(".ts"))
    .map((f) => path.posix.join(dir, f.split(path.sep).join("/")));
}

/** Each platform component's module: the platform/ file that exports its descriptor. */
async function componentModules(): Promise<string[]> {
  const components = environmentComponents().filter((c) => c !== OPENKEEL);
  const modules: string[] = [];
  for (const file of sources("platform")) {
    const exported = Object.values(await import(path.join(REPO, file)));
    if (components.some((c) => exported.includes(c))) modules.push(path.posix.basename(file, ".ts"));
  }
  expect(modules.length, "every component's module found").toBe(components.length);
  return modules;
}

/** The names a machinery file may not hold, with the test of their own modules. */
async function names(): Promise<{ services: Name[]; components: Name[] }> {
  const services = serviceNames(OPENKEEL_SERVICES);
  const components = (await componentModules()).map((m): Name => ({
    name: m,
    own: (file) => file === `platform/${m}.ts` || file.startsWith(`platform/${m}-`),
    in: (t) => holds(t.text, words(m).join("")),
  }));
  return { services, components };
}

/** `file: name` for each name a machinery file holds outside its own module. */
async function hits(
  files: readonly string[] = MACHINERY.flatMap(sources),
  read = (file: string) => fs.readFileSync(path.join(REPO, file), "utf8"),
): Promise<string[]> {
  const { services, components } = await names();
  const found = new Set<string>();
  for (const file of files) {
    // a service's module, and the registries that list them all
    if (services.some((n) => n.own(file)) || file === REGISTRY || PIN_REGISTRY.includes(file)) continue;
    // a component's module builds on the components below it, never on a service above it
    const forbidden = components.some((c) => c.own(file)) ? services : [...services, ...components];
    for (const token of tokens(file, read(file))) {
      for (const n of forbidden) if (n.in(token)) found.add(`${file}: ${n.name}`);
    }
  }
  return [...found].sort();
}

describe("the machinery names no service nor platform component", () => {
  it("reads identifiers, string literals, templates' texts and import paths in any spelling, and no comment", () => {
    const source = [
      "// Ironic in a comment",
      "/** Zun in a doc comment */",
      'import { x } from "../platform/kube-ovn";',
      "const swiftFindings = `${a}the MariaDB operator's ${b} Longhorn${c}`;",
      'const KEY = "openkeel-placement"; const placementKey = 1;',
      'const c = { docs: [{ where: "for Manila\'s shares" }], name: "Cinder" }; const X_DOCS = ["Masakari"];',
    ].join("\n");
    const held = (name: string, t: Token[]) => t.some((token) => holds(token.text, name));
    const t = tokens("sample.ts", source);
    expect(["kubeovn", "swift", "mariadboperator", "longhorn"].filter((n) => held(n, t))).toEqual(["kubeovn", "swift", "mariadboperator", "longhorn"]);
    expect(["ironic", "zun", "manila", "masakari"].filter((n) => held(n, t))).toEqual([]);
    expect(held("cinder", t)).toBe(true);
    expect(t.filter((token) => token.literal).map((token) => token.text)).toContain("openkeel-placement");
  });

  it("outside its own module: nowhere (the last of issue 47's list moved on 2026-12-06)", async () => {
    expect(await hits()).toEqual([]);
  });

  it("trips: machinery naming a component, a component's module naming a service; a module naming its own, a registry", async () => {
    const sources: Record<string, string> = {
      "openkeel/guarantees.ts": 'import { galeraPod } from "../platform/mariadb-operator";',
      "platform/longhorn-feasibility.ts": "const m = `Swift devices on ${LONGHORN_LOCAL_CLASS}`;",
      "platform/kube-ovn.ts": "const joinRange = KUBE_OVN_JOIN; // Ironic in a comment",
      "openkeel/services/ironic.ts": 'const subnet = "kube-ovn";',
      "openkeel/services/index.ts": "export const all = [ironic, swift];",
    };
    expect(await hits(Object.keys(sources), (f) => sources[f])).toEqual([
      "openkeel/guarantees.ts: mariadb-operator",
      "platform/longhorn-feasibility.ts: swift",
    ]);
  });
});
