// The runbooks of docs/operating.md (the first deployment of prod-medium, the lab quick start) name
// commands, paths, versions, addresses and names; each is held here to the repository, to the
// render it describes and to the deploy workflow, so that a runbook step cannot go stale quietly:
// the keys outside the checkout, the switch side from the host networks, the one apply order.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { capture } from "../../cli/cli";
import { clusterCommand } from "../../pipeline/cluster-command";
import { KIND_VERSION, KUBERNETES_VERSION, TALOS_VERSION } from "../../platform/versions";
import { readRenderedDir } from "../../render/rendered";
import { NODES_DIR, SECRETS_FILE, TALOSCONFIG_FILE } from "../../tools/talos-config-command";
import { genConfigInputs } from "../../tools/talos-validate";
import { REPO, shippedConfig } from "../helpers/stacks";
import { metallbSettings } from "../../platform/metallb-settings";

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
/** The runbook's text with its line breaks and indents as single spaces: what a sentence says, wherever it wraps. */
const MEDIUM_FLAT = MEDIUM.replace(/\s+/g, " ");
const LAB = section("The lab quick start");

/** Every repository path the text names (`rendered/…`, `stacks/…`), those with a placeholder (`<machine>`) aside. */
function repositoryPaths(text: string): string[] {
  const named = [...text.matchAll(/\b(?:rendered|stacks|docs)\/[A-Za-z0-9_.+/<>-]*[A-Za-z0-9_+>-]/g)].map((m) => m[0]);
  return [...new Set(named.filter((p) => !p.includes("<")))];
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
    const kubernetes = [...MEDIUM.matchAll(/--kubernetes-version ([^\s`]+)/g)].map((m) => m[1]);
    expect(kubernetes).toEqual([KUBERNETES_VERSION]);
    expect(LAB).toContain(`kind ${KIND_VERSION}`);
  });

  it("prod-medium: the cluster name, endpoint and context are what the stack is bound to, and what talos-config gives Talos", () => {
    const cluster = shippedConfig("prod-medium").cluster!;
    const gen = /`talosctl gen config (\S+)\s+(\S+) --with-secrets … --kubernetes-version (\S+)`/.exec(MEDIUM)!;
    expect(gen[2]).toBe(cluster.apiServer);
    // talosctl names the admin context admin@<cluster name>
    expect(`admin@${gen[1]}`).toBe(cluster.context);
    expect(gen[3]).toBe(KUBERNETES_VERSION);
    expect(genConfigInputs(readRenderedDir(path.join(REPO, "rendered/prod-medium")), "prod-medium")).toEqual({
      clusterName: gen[1],
      endpoint: gen[2],
      kubernetesVersion: gen[3],
    });
    expect(MEDIUM).toContain(`\`${cluster.context}\``);
    expect(MEDIUM_FLAT).toContain(`\`the kubeconfig's context '${cluster.context}' points at ${cluster.apiServer}\``);
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
    // the commands' examples name nodes of this render, in the layout npm run talos-config writes
    const file = /--file "\$KEYS\/([a-z]+)\/(\S+)\.yaml"/.exec(MEDIUM)!;
    expect(file[1]).toBe(NODES_DIR);
    expect(machines[file[2]]).toBeDefined();
    expect(MEDIUM).toContain(`export TALOSCONFIG="$KEYS/${TALOSCONFIG_FILE}"`);
    expect(MEDIUM).toContain(`\`${SECRETS_FILE}\``);
  });

  it("prod-medium: the interfaces it names are the ones the render gives those nodes", () => {
    const cfg = shippedConfig("prod-medium");
    const provisioning = cfg.services.ironic!.provisioningNetwork as { interface: string };
    expect(MEDIUM).toContain(`\`${metallbSettings(cfg.platform)!.interfaces[0]}\` of the controlPlane and network nodes`);
    expect(MEDIUM).toContain(`\`${provisioning.interface}\` of prov-1`);
    expect(fs.readFileSync(path.join(REPO, "rendered/prod-medium/talos/nodes/prov-1.yaml"), "utf8")).toContain(`name: ${provisioning.interface}`);
    expect(fs.readFileSync(path.join(REPO, "rendered/prod-medium/talos/nodes/net-1.yaml"), "utf8")).toContain(
      `name: ${metallbSettings(cfg.platform)!.interfaces[0]}`,
    );
    expect(fs.existsSync(path.join(REPO, "policy/PulumiPolicy.yaml"))).toBe(true);
  });

  it("prod-medium: what npm run cluster prints after the kubeconfig step is what the command prints", async () => {
    const cluster = shippedConfig("prod-medium").cluster!;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "runbook-kubeconfig-"));
    const kubeconfig = path.join(dir, "config");
    fs.writeFileSync(
      kubeconfig,
      stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "c", cluster: { server: cluster.apiServer } }],
        contexts: [{ name: cluster.context, context: { cluster: "c", user: "admin" } }],
        users: [{ name: "admin", user: {} }],
      }),
    );
    const r = await capture(
      (a, io) => clusterCommand(a, io, { KUBECONFIG: kubeconfig }),
      ["--stack", "prod-medium", "--stacks-dir", path.join(REPO, "stacks")],
    );
    fs.rmSync(dir, { recursive: true, force: true });
    expect(r.code).toBe(0);
    const quoted = /prints `(the kubeconfig's context [^`]+)`/.exec(MEDIUM_FLAT)![1];
    expect(r.stdout.split("\n").map((l) => l.trim())).toContain(quoted);
  });
});

describe("the first deployment of prod-medium: commands, no guesses, no keys in the checkout", () => {
  const deploy = fs.readFileSync(path.join(REPO, ".github/workflows/deploy.yml"), "utf8");

  it("every key and config goes to $KEYS, a folder outside the checkout, through npm run talos-config", () => {
    expect(MEDIUM).toMatch(/`KEYS=~\/[^`]+`/);
    expect(MEDIUM).toContain('npm run talos-config -- --stack prod-medium --out "$KEYS"');
    // no relative output of talosctl's own (the old runbook's _out/ and secrets.yaml in the checkout)
    expect(MEDIUM).not.toMatch(/_out\b|gen secrets -o|talosctl[^`]*\s-o\s/);
    // a retried kubeconfig renames its context (…-1), which the stack's binding refuses; one written apart goes to $KEYS
    const kubeconfigs = [...MEDIUM_FLAT.matchAll(/talosctl kubeconfig[^`]*/g)].map((m) => m[0]);
    expect(kubeconfigs.length).toBeGreaterThan(0);
    for (const k of kubeconfigs) {
      expect(k).toContain("--force");
      if (k.includes("--merge=false")) expect(k).toMatch(/ "\$KEYS\/[^"]+"$/);
    }
  });

  it("the Pulumi steps are the deploy workflow's: its environment and secrets, its backend, --policy-pack policy", () => {
    const production = deploy.slice(deploy.indexOf("  production:"));
    const env = production.slice(production.indexOf("    env:"), production.indexOf("    steps:"));
    const named = [...env.matchAll(/\$\{\{ (secrets|vars)\.([A-Z_]+) \}\}/g)].map((m) => m[2]);
    expect(named.sort()).toEqual(["KUBECONFIG", "PULUMI_ACCESS_TOKEN", "PULUMI_BACKEND_URL", "PULUMI_CONFIG_PASSPHRASE"]);
    for (const name of named) expect(MEDIUM, name).toContain(`\`${name}\``);
    expect(production).toContain("policyPacks: policy");
    for (const m of MEDIUM_FLAT.matchAll(/pulumi (up|preview)\b[^`]*/g)) expect(m[0], m[0]).toContain("--policy-pack policy");
    expect(MEDIUM).not.toContain("login --local");
    expect(MEDIUM).toContain("npm run cluster -- --stack prod-medium");
    expect(MEDIUM).toMatch(/npm run plan -- --stack\s+prod-medium/);
  });

  it("on a self-managed backend the salt comes first, so that pulumi stack init keeps the stack file", () => {
    const salt = MEDIUM.indexOf("npm run encryption-salt -- --stack prod-medium");
    expect(salt).toBeGreaterThan(0);
    expect(MEDIUM.indexOf("`pulumi stack init prod-medium`")).toBeGreaterThan(salt);
  });

  it("the switch side is the stack's host networks: one LACP group per bond, its ports, MTU and tagged VLANs", () => {
    const cfg = shippedConfig("prod-medium");
    const rows = [...MEDIUM.matchAll(/^ *\| ([a-z][a-z0-9-]*) \| ([a-z0-9, -]+) \| ([a-z0-9.]+): ([a-z0-9, ]+) \| (\d+) \| ([^|]+) \|$/gm)].map((r) =>
      r.slice(1, 7),
    );
    const want = Object.entries(cfg.hostNetworks ?? {}).flatMap(([name, net]) => {
      const nodes = cfg.nodes.filter((n) => n.hostNetwork === name);
      // Talos' bonds and the bonds OVS builds from an `ovs` port's members: each is one LACP group
      const bonds = [...net.bonds, ...(net.ovs ?? []).filter((p) => p.lacp !== undefined && p.lacp !== "off")];
      return bonds.map((b) => {
        const vlans = net.vlans.filter((v) => v.parent === b.name).map((v) => String(v.id));
        const external = nodes.some((n) => n.labels?.["network.openkeel.io/external-nic"] === b.name);
        const physnets = [...new Set(nodes.flatMap((n) => (n.bridgeMappings ?? "").split(",").map((m) => m.split(":")[0])))].filter(Boolean);
        const tagged = external ? `the provider networks' VLANs (${physnets.join(", ")}, Neutron's)` : vlans.length > 0 ? vlans.join(", ") : "none";
        return [name, nodes.map((n) => n.name).join(", "), b.name, (b.members ?? []).join(", "), String(b.mtu ?? 1500), tagged];
      });
    });
    expect(rows.map((r) => r.map((c) => c.trim()))).toEqual(want);
    expect(MEDIUM).toContain(`the node network \`${cfg.network!.nodeSubnet}\``);
  });

  it("one document gives the apply order: node-configuration.md links the runbook and gives none of its own", () => {
    const nodeDoc = fs.readFileSync(path.join(REPO, "docs/node-configuration.md"), "utf8");
    expect(nodeDoc).toContain("(operating.md#the-first-deployment-of-prod-medium-from-bare-metal)");
    expect(nodeDoc).not.toMatch(/talosctl (apply-config|gen secrets|gen config \S+ https)|_out\//);
    expect(OPERATING.replace(MEDIUM, "")).not.toMatch(/talosctl apply-config/);
  });
});
