// The runbooks of docs/operating.md (the first deployment of prod-medium, the lab quick start) name
// commands, paths, versions, addresses and names; each is held here to the repository and to the
// render it describes, so that a runbook step cannot go stale quietly.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { KIND_VERSION, KUBERNETES_VERSION, TALOS_VERSION } from "../../platform/versions";
import { REPO, shippedConfig } from "../helpers/stacks";

const OPERATING = fs.readFileSync(path.join(REPO, "docs/operating.md"), "utf8");
const SCRIPTS = Object.keys(JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8")).scripts as Record<string, string>);

/** The text of a `## ` section of docs/operating.md. */
function section(heading: string): string {
  const start = OPERATING.indexOf(`## ${heading}\n`);
  expect(start, `docs/operating.md has a section "## ${heading}"`).toBeGreaterThanOrEqual(0);
  const end = OPERATING.indexOf("\n## ", start + 3);
  return OPERATING.slice(start, end < 0 ? undefined : end);
}

const MEDIUM = section("The first deployment of prod-medium, from bare metal");
const LAB = section("The lab quick start");

/** Every repository path the text names (`rendered/…`, `stacks/…`), placeholders aside. */
function repositoryPaths(text: string): string[] {
  return [...new Set([...text.matchAll(/\b(?:rendered|stacks|docs)\/[A-Za-z0-9_.+/-]*[A-Za-z0-9_+-]/g)].map((m) => m[0]))];
}

function npmScripts(text: string): string[] {
  return [...text.matchAll(/npm run ([a-z:-]+)/g)].map((m) => m[1]);
}

describe("the runbooks of docs/operating.md", () => {
  it.each([
    ["prod-medium", MEDIUM],
    ["the lab", LAB],
  ])("%s: every path it names exists, every npm script it runs is in package.json", (_name, text) => {
    const paths = repositoryPaths(text);
    expect(paths.length).toBeGreaterThan(0);
    for (const p of paths) expect(fs.existsSync(path.join(REPO, p)), p).toBe(true);
    for (const s of npmScripts(text)) expect(SCRIPTS, `npm run ${s}`).toContain(s);
  });

  it("prod-medium: the versions are the pins and CI's", () => {
    const workflow = fs.readFileSync(path.join(REPO, ".github/workflows/deploy.yml"), "utf8");
    const pulumi = /PULUMI_VERSION: "([^"]+)"/.exec(workflow)![1];
    expect(MEDIUM).toContain(`\`talosctl\` ${TALOS_VERSION}`);
    expect(MEDIUM).toContain(`Pulumi CLI ${pulumi}`);
    for (const m of MEDIUM.matchAll(/factory\.talos\.dev\/image\/[^/]+\/(v[\d.]+)\//g)) expect(m[1]).toBe(TALOS_VERSION);
    const kubernetes = [...MEDIUM.matchAll(/--kubernetes-version (\S+)/g)].map((m) => m[1]);
    expect(kubernetes).toEqual([KUBERNETES_VERSION]);
    expect(LAB).toContain(`kind ${KIND_VERSION}`);
  });

  it("prod-medium: the cluster name, endpoint and context are what the stack is bound to", () => {
    const cluster = shippedConfig("prod-medium").cluster!;
    const gen = /talosctl gen config (\S+) (\S+) /.exec(MEDIUM)!;
    expect(gen[2]).toBe(cluster.apiServer);
    // talosctl names the admin context admin@<cluster name>
    expect(`admin@${gen[1]}`).toBe(cluster.context);
    expect(MEDIUM).toContain(`\`${cluster.context}\``);
    expect(LAB).toContain(`\`${shippedConfig("lab").cluster!.context}\``);
  });

  it("prod-medium: the node table is the inventory and the render's machines.yaml", () => {
    const machines = parse(fs.readFileSync(path.join(REPO, "rendered/prod-medium/talos/machines.yaml"), "utf8")).machines as Record<
      string,
      { machineType: string; group: string }
    >;
    const nodes = shippedConfig("prod-medium").nodes;
    const rows = [...MEDIUM.matchAll(/^ *\| ([a-z0-9, -]+) \| ([\d., ]+) \| (controlplane|worker) \| ([a-z+-]+) \|$/gm)];
    const listed = rows.flatMap((r) => {
      const names = r[1].split(", ");
      const addresses = r[2].split(", ");
      expect(addresses, r[0]).toHaveLength(names.length);
      return names.map((name, i) => ({ name, address: addresses[i], type: r[3], group: r[4] }));
    });
    expect(listed.map((n) => n.name).sort()).toEqual(nodes.map((n) => n.name).sort());
    for (const n of listed) {
      expect(n.address, n.name).toBe(nodes.find((x) => x.name === n.name)!.internalIP);
      expect([n.type, n.group], n.name).toEqual([machines[n.name].machineType, machines[n.name].group]);
    }
    // the commands' examples name nodes, groups and files of this render
    const patch = /--patch @(\S+) --patch @(\S+) -o _out\/(\S+)\.yaml/.exec(MEDIUM)!;
    expect(machines[patch[3]].group).toBe(path.basename(patch[1], ".yaml"));
    expect(patch[2]).toBe(`rendered/prod-medium/talos/nodes/${patch[3]}.yaml`);
  });

  it("prod-medium: the interfaces it names are the ones the render gives those nodes", () => {
    const cfg = shippedConfig("prod-medium");
    const provisioning = cfg.services.ironic!.provisioningNetwork as { interface: string };
    expect(MEDIUM).toContain(`\`${cfg.platform.metallb!.interfaces[0]}\` of the controlPlane and network nodes`);
    expect(MEDIUM).toContain(`\`${provisioning.interface}\` of prov-1`);
    expect(fs.readFileSync(path.join(REPO, "rendered/prod-medium/talos/nodes/prov-1.yaml"), "utf8")).toContain(`name: ${provisioning.interface}`);
    expect(fs.readFileSync(path.join(REPO, "rendered/prod-medium/talos/nodes/net-1.yaml"), "utf8")).toContain(`name: ${cfg.platform.metallb!.interfaces[0]}`);
    expect(fs.existsSync(path.join(REPO, "policy/PulumiPolicy.yaml"))).toBe(true);
  });
});
