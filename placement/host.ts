// The host contract: a workload is placed only where its node's host can run it. Each component
// states what it needs of the host of every node it may run on (CNI plugin binaries, the host
// interfaces its attachments name, host tools, container runtime handlers, kernel modules, devices,
// mounts), next to the component and with its upstream citation; each environment states what a
// node's host has (its OS at the pinned version, read from what is rendered for the node: Talos
// schematic extensions, kernel modules, user volumes, host network), and node agents add what they
// install on every node they run on (Kube-OVN's and Multus' CNI plugins). The placement report
// knows the nodes of each component; a need that no provider meets on one of them is an error of
// the plan, like a component that can run nowhere.
import type { Check } from "../config/problems";
import type { K8sObject, Plan } from "../plan/plan";
import { allUnits } from "../plan/plan";
import type { AttachmentNeed, ComponentNeed, HostCapabilityKind, HostContract, HostInstall, HostNeed, HostProvision, NodeLabelNeed } from "../plan/host";

/** What the contract reads of a component's placement (./report.ts ComponentPlacement). */
interface ComponentPlacement {
  component: { name: string; kind: string; configPath?: string | undefined; scheduling: { hostNetwork?: boolean | undefined }; nodeSelection?: unknown };
  eligible: readonly string[];
}

/** What it reads of a node as the scheduler sees it (./report.ts ReportNode). */
interface ReportNode {
  name: string;
  labels: Readonly<Record<string, string>>;
}

/** The check code of an unmet need of each kind. */
export const NEED_CODES: Record<HostCapabilityKind, string> = {
  cniPlugin: "host-cni-plugin",
  interface: "host-interface",
  hostTool: "host-tool",
  runtimeHandler: "host-runtime-handler",
  kernelModule: "host-kernel-module",
  device: "host-device",
  mount: "host-mount",
};

/** How the capabilities of a kind read in messages. */
const KIND_WORDS: Record<HostCapabilityKind, string> = {
  cniPlugin: "CNI plugin",
  interface: "host interface",
  hostTool: "host tool",
  runtimeHandler: "container runtime handler",
  kernelModule: "kernel module",
  device: "device",
  mount: "mount",
};

/** What each node's host has: its environment's provisions, and what the agents that run there install. */
export function nodeProvisions(
  plan: Plan,
  os: ReadonlyMap<string, readonly HostProvision[]>,
  installs: readonly HostInstall[],
  placements: readonly ComponentPlacement[],
): Map<string, HostProvision[]> {
  const out = new Map<string, HostProvision[]>([...os].map(([node, p]) => [node, [...p]]));
  for (const install of installs) {
    const p = placementOf(plan, placements, install.component, "installs what it provides");
    for (const node of p?.eligible ?? []) out.get(node)?.push(...install.provides.map((c) => ({ ...c, by: install.by })));
  }
  return out;
}

/**
 * The placement of a component the contract names; none when the Plan has no unit of that name (a
 * service that is off). A unit without that component is a misspelt name: a bug of this repository.
 */
function placementOf(plan: Plan, placements: readonly ComponentPlacement[], component: string, what: string): ComponentPlacement | undefined {
  const p = placements.find((x) => x.component.name === component);
  const unit = component.split("/")[0];
  if (!p && allUnits(plan).some((u) => u.name === unit)) {
    throw new Error(`host contract: a component ${what} through ${component}, which unit ${unit} does not place (placement.json lists its components)`);
  }
  return p;
}

/** The NAD a need names, read from the Plan: its plugin, IPAM plugin and master, as the cluster receives them. */
function attachmentConfig(plan: Plan, ref: AttachmentNeed["attachment"]): { type: string; ipam?: string; master?: string } {
  const nad = allUnits(plan)
    .flatMap((u) => (u.kind === "Manifests" ? u.objects : []))
    .find((o: K8sObject) => o.kind === "NetworkAttachmentDefinition" && o.metadata.name === ref.name && o.metadata.namespace === ref.namespace);
  const spec = nad?.spec as { config?: string } | undefined;
  if (typeof spec?.config !== "string") throw new Error(`host contract: no NetworkAttachmentDefinition ${ref.namespace}/${ref.name} with a config in the Plan`);
  const config = JSON.parse(spec.config) as { type: string; master?: string; ipam?: { type?: string } };
  return { type: config.type, ...(config.ipam?.type ? { ipam: config.ipam.type } : {}), ...(config.master ? { master: config.master } : {}) };
}

/** A component's needs with every attachment turned into the plugin, IPAM plugin and interface it names. */
export function expandNeeds(plan: Plan, needs: readonly ComponentNeed[]): (HostNeed | NodeLabelNeed)[] {
  return needs.flatMap((n): (HostNeed | NodeLabelNeed)[] => {
    if (!("attachment" in n)) return [n];
    const c = attachmentConfig(plan, n.attachment);
    const nad = `NetworkAttachmentDefinition ${n.attachment.namespace}/${n.attachment.name}`;
    return [
      {
        kind: "cniPlugin",
        anyOf: [c.type],
        why: `${n.why}: its ${nad} is of type ${c.type}`,
        fix: `set ${n.configPath}.type to a plugin the nodes have (the message lists them, with what installs each), or install the '${c.type}' plugin on them`,
        configPath: `${n.configPath}.type`,
      },
      ...(c.ipam
        ? [
            {
              kind: "cniPlugin" as const,
              anyOf: [c.ipam],
              why: `${n.why}: its ${nad} takes addresses from the '${c.ipam}' IPAM plugin`,
              fix: `run the pod network that installs '${c.ipam}' on these nodes`,
              configPath: n.configPath,
            },
          ]
        : []),
      ...(c.master
        ? [
            {
              kind: "interface" as const,
              anyOf: [c.master],
              why: `${n.why}: its ${nad} makes each pod's interface a child of the host's ${c.master}`,
              fix: `declare ${c.master} in the host network of these nodes (openkeel:hostNetworks.<name>: a VLAN, bond or link), or set ${n.configPath}.interface to one they have`,
              configPath: `${n.configPath}.interface`,
            },
          ]
        : []),
    ];
  });
}

/**
 * Whether the host has one of the names. What Open vSwitch owns counts only for a need that adds it
 * to an OVS bridge, and then nothing else does: an OVS bond is no kernel interface at all, and its
 * NICs are OVS ports.
 */
function provides(have: readonly HostProvision[], kind: HostCapabilityKind, anyOf: readonly string[], ovsOwned = false): boolean {
  return have.some((p) => p.kind === kind && (p.ovs === true) === ovsOwned && (p.name === "*" || anyOf.includes(p.name)));
}

/** Why a node's interface of that name is not one OVS may take: the OS manages it (and what it carries). */
function managedByOs(have: readonly HostProvision[], name: string): string | undefined {
  const os = have.find((p) => p.kind === "interface" && p.name === name && p.ovs !== true);
  if (!os) return undefined;
  const carries = os.addressed ? ", and carries the node's address and default route, which the node would lose into the bridge" : "";
  return `${name} is a link the node's OS manages (${os.by})${carries}; its link controller brings down and detaches a link that OVS makes ovs-system the master of (siderolabs/talos@v1.13.9 internal/app/machined/pkg/controllers/network/link_spec.go:706-758)`;
}

/** What a node has of a kind, for the message: `bridge, macvlan, … (Talos v1.13.9, Kube-OVN v1.16.2)`. */
function describeHas(have: readonly HostProvision[], kind: HostCapabilityKind, ovsOwned = false): string {
  const of = have.filter((p) => p.kind === kind && (p.ovs === true) === ovsOwned);
  if (of.length === 0 && ovsOwned) return "no interface Open vSwitch owns: its host network declares no ovs";
  if (ovsOwned) return `only ${[...new Set(of.map((p) => p.name))].sort().join(", ")} owned by Open vSwitch`;
  if (of.length === 0 && kind === "interface") return "no host interface declared: it names no entry of openkeel:hostNetworks";
  if (of.length === 0) return `no ${KIND_WORDS[kind]}`;
  const names = [...new Set(of.map((p) => p.name))].sort();
  const by = [...new Set(of.map((p) => p.by))].sort();
  return `${names.join(", ")} (from ${by.join("; ")})`;
}

const describeNames = (anyOf: readonly string[]) => anyOf.map((n) => `'${n}'`).join(" or ");

export interface HostContractFacts {
  plan: Plan;
  nodes: readonly ReportNode[];
  placements: readonly ComponentPlacement[];
  contract: HostContract;
  /** What each node's host has, agents' installs included (nodeProvisions). */
  provisions: ReadonlyMap<string, readonly HostProvision[]>;
  /** The node's index in openkeel:nodes, for the key paths that point at a node. */
  nodeIndex(name: string): number;
}

/** One error per component and need, naming every node that lacks it and what each has instead. */
function needCheck(facts: HostContractFacts, p: ComponentPlacement, need: HostNeed, lacking: string[]): Check {
  const have = (n: string) => facts.provisions.get(n) ?? [];
  const byHas = new Map<string, string[]>();
  for (const n of lacking) {
    const has = describeHas(have(n), need.kind, need.ovsOwned);
    byHas.set(has, [...(byHas.get(has) ?? []), n]);
  }
  const nodes = [...byHas].map(([has, ns]) => `${ns.join(", ")} (${ns.length > 1 ? "each has" : "has"} ${has})`).join("; ");
  return {
    level: "error",
    code: NEED_CODES[need.kind],
    message: `${p.component.name} (${p.component.kind}) needs the ${KIND_WORDS[need.kind]} ${describeNames(need.anyOf)}${need.ovsOwned ? ", owned by Open vSwitch," : ""} on every node it may run on (${need.why}), and ${lacking.length === 1 ? "this node lacks" : "these nodes lack"} it: ${nodes}`,
    fix: need.fix,
    path: need.configPath ?? p.component.configPath ?? `openkeel:nodes[${facts.nodeIndex(lacking[0])}].roles`,
  };
}

/**
 * Per node, the interfaces something enslaves and to what: bond members (from the host's
 * provisions), and the interfaces components that may run there take (the chassis' external NIC).
 */
function takenInterfaces(facts: HostContractFacts, byName: ReadonlyMap<string, ReportNode>): Map<string, Map<string, string>> {
  const taken = new Map<string, Map<string, string>>();
  const take = (node: string, iface: string, master: string) => taken.set(node, (taken.get(node) ?? new Map()).set(iface, master));
  for (const [node, have] of facts.provisions)
    for (const p of have) if (p.kind === "interface" && p.master) take(node, p.name, p.ovs ? p.master : `bond ${p.master}`);
  for (const { component, needs } of facts.contract.needs) {
    const p = placementOf(facts.plan, facts.placements, component, "states its needs");
    for (const need of needs) {
      if ("attachment" in need || need.takes === undefined) continue;
      for (const node of p?.eligible ?? []) {
        const names = "nodeLabel" in need ? [byName.get(node)?.labels[need.nodeLabel]] : need.anyOf;
        for (const name of names) if (name !== undefined) take(node, name, `${need.takes} (${component})`);
      }
    }
  }
  return taken;
}

/** A free-interface need on a node: met by a name it has that nothing enslaves; else what holds the names it has. */
function freeInterface(need: HostNeed, have: readonly HostProvision[], taken: ReadonlyMap<string, string> | undefined): { met: boolean; held: string[] } {
  const present = need.anyOf.filter((n) => provides(have, "interface", [n]));
  const held = present.filter((n) => taken?.has(n)).map((n) => `${n} is enslaved to ${taken!.get(n)}`);
  // what OVS owns is no free kernel interface: an OVS bond is none at all, its NICs are OVS ports
  const ovs = need.anyOf
    .filter((n) => !present.includes(n) && provides(have, "interface", [n], true))
    .map((n) => `${n} is Open vSwitch's (${taken?.get(n) ?? "declared under ovs"})`);
  return { met: present.length > held.length, held: [...held, ...ovs] };
}

/** Nodes that have the interface, but only as another's slave: the component cannot use it there. */
function enslavedCheck(facts: HostContractFacts, p: ComponentPlacement, need: HostNeed, nodes: { n: string; held: string[] }[]): Check {
  return {
    level: "error",
    code: "host-interface-enslaved",
    message: `${p.component.name} (${p.component.kind}) needs ${describeNames(need.anyOf)} free of any master on every node it may run on (${need.why}), and on ${nodes
      .map((j) => `${j.n} ${j.held.join(", ")}`)
      .join("; ")}`,
    fix: need.fix,
    path: need.configPath ?? p.component.configPath ?? `openkeel:nodes[${facts.nodeIndex(nodes[0].n)}].roles`,
  };
}

/**
 * One network on every node a component may use it on: an interface it names (an attachment's
 * master, MetalLB's) is the same VLAN, parent and tag, wherever it is a VLAN. The same name on
 * another tag is another segment: the pods of one node would not reach those of the other.
 */
function identityCheck(facts: HostContractFacts, p: ComponentPlacement, need: HostNeed): Check[] {
  const seen = new Map<string, { parent: string; id: number; nodes: string[] }[]>();
  for (const node of p.eligible) {
    for (const prov of facts.provisions.get(node) ?? []) {
      if (prov.kind !== "interface" || !prov.vlan || !need.anyOf.includes(prov.name)) continue;
      const ids = seen.get(prov.name) ?? [];
      const same = ids.find((x) => x.parent === prov.vlan!.parent && x.id === prov.vlan!.id);
      if (same) same.nodes.push(node);
      else ids.push({ ...prov.vlan, nodes: [node] });
      seen.set(prov.name, ids);
    }
  }
  return [...seen]
    .filter(([, ids]) => ids.length > 1)
    .map(([name, ids]) => ({
      level: "error" as const,
      code: "host-interface-identity",
      message: `${p.component.name} (${p.component.kind}) uses ${name} as one network (${need.why}), and it is not one VLAN: ${ids.map((x) => `VLAN ${x.id} of ${x.parent} on ${x.nodes.join(", ")}`).join("; ")}`,
      fix: `tag ${name} alike in every host network that declares it (openkeel:hostNetworks.<name>.vlans), or give the other segment its own name`,
      path: need.configPath ?? p.component.configPath ?? `openkeel:nodes[${facts.nodeIndex(ids[1].nodes[0])}].hostNetwork`,
    }));
}

/** Whether a component places pods of its own on the pod network (not on the host's, not a node selection). */
const podNetworkPods = (c: ComponentPlacement["component"]) => c.nodeSelection === undefined && c.scheduling.hostNetwork !== true;

/**
 * The pod network's needs, once for every node where a pod on it may run: one error per need,
 * naming the nodes that lack it and how many components may run pods there.
 */
function podNeedChecks(facts: HostContractFacts): Check[] {
  const podNodes = new Map<string, number>();
  for (const p of facts.placements) if (podNetworkPods(p.component)) for (const n of p.eligible) podNodes.set(n, (podNodes.get(n) ?? 0) + 1);
  return (facts.contract.podNeeds ?? []).flatMap((need) => {
    const lacking = [...podNodes.keys()].filter((n) => !provides(facts.provisions.get(n) ?? [], need.kind, need.anyOf));
    if (lacking.length === 0) return [];
    const pods = Math.max(...lacking.map((n) => podNodes.get(n)!));
    const every = { component: { name: "every pod on the pod network", kind: `up to ${pods} component(s) per node`, scheduling: {} }, eligible: lacking };
    return [needCheck(facts, every, need, lacking)];
  });
}

/** The host contract's errors: each need of each component on each node it may run on. */
export function hostContractChecks(facts: HostContractFacts): Check[] {
  const checks: Check[] = [...podNeedChecks(facts)];
  const byName = new Map(facts.nodes.map((n) => [n.name, n]));
  const taken = takenInterfaces(facts, byName);
  for (const { component, needs } of facts.contract.needs) {
    const p = placementOf(facts.plan, facts.placements, component, "states its needs");
    if (!p) continue;
    for (const need of expandNeeds(facts.plan, needs)) {
      if ("nodeLabel" in need) {
        // one error per name the label gives, pointing at the first node that lacks it
        const lackingByName = new Map<string, string[]>();
        for (const node of p.eligible) {
          const name = byName.get(node)?.labels[need.nodeLabel];
          if (name === undefined || provides(facts.provisions.get(node) ?? [], need.kind, [name], need.ovsOwned)) continue;
          lackingByName.set(name, [...(lackingByName.get(name) ?? []), node]);
        }
        for (const [name, nodes] of lackingByName) {
          const path = `openkeel:nodes[${facts.nodeIndex(nodes[0])}].labels["${need.nodeLabel}"]`;
          const managed = need.ovsOwned ? managedByOs(facts.provisions.get(nodes[0]) ?? [], name) : undefined;
          const why = `${need.why}; the node's ${need.nodeLabel} label names it${managed ? `, and ${managed}` : ""}`;
          checks.push(needCheck(facts, p, { ...need, anyOf: [name], configPath: path, why }, nodes));
        }
        continue;
      }
      if (need.kind === "interface") checks.push(...identityCheck(facts, p, need));
      if (need.free) {
        const judged = p.eligible.map((n) => ({ n, ...freeInterface(need, facts.provisions.get(n) ?? [], taken.get(n)) }));
        const enslaved = judged.filter((j) => !j.met && j.held.length > 0);
        const absent = judged.filter((j) => !j.met && j.held.length === 0).map((j) => j.n);
        if (absent.length > 0) checks.push(needCheck(facts, p, need, absent));
        if (enslaved.length > 0) checks.push(enslavedCheck(facts, p, need, enslaved));
        continue;
      }
      const lacking = p.eligible.filter((n) => !provides(facts.provisions.get(n) ?? [], need.kind, need.anyOf));
      if (lacking.length > 0) checks.push(needCheck(facts, p, need, lacking));
    }
  }
  return checks;
}

/** A need in words, as placement.md lists it: `CNI plugin 'macvlan'`, `host interface named by label …`. */
function describeNeed(need: HostNeed | NodeLabelNeed): string {
  const what = "nodeLabel" in need ? `named by the node's ${need.nodeLabel} label` : describeNames(need.anyOf);
  const free = "free" in need && need.free ? ", free of any master" : need.ovsOwned ? ", owned by Open vSwitch" : "";
  return `${KIND_WORDS[need.kind]} ${what}${free}`;
}

/** What every pod on the pod network needs, in words. */
export function describePodNeeds(contract: HostContract): string[] {
  return (contract.podNeeds ?? []).map(describeNeed);
}

/** Each component's needs in words, attachments expanded (the components of units the Plan holds). */
export function describeNeeds(plan: Plan, contract: HostContract): Map<string, string[]> {
  const units = new Set(allUnits(plan).map((u) => u.name));
  const out = new Map<string, string[]>();
  for (const { component, needs } of contract.needs) {
    if (!units.has(component.split("/")[0])) continue;
    out.set(component, [...(out.get(component) ?? []), ...expandNeeds(plan, needs).map(describeNeed)]);
  }
  return out;
}
