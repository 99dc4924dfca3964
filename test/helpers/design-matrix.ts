// The design's § 2 matrix, transcribed from the design text (§ 2.1–2.3, § 5.1 for the role lists,
// § 5.6 for NodeHealthChecks), not from the code: a component-name pattern and the nodes it must reach.
import { hasTrait } from "../../config/lifecycle";
import type { LoadedConfig } from "../../config/schema";
import type { PlacementReport } from "../../placement/report";
import type { Role } from "../../config/roles";

/** Exactly the nodes carrying one of the roles; every node; or a non-empty subset of the roles' nodes. */
type NhcGroup = Role | "kubernetesControlPlane";
type Expect = Role[] | "every node" | "kubernetes control plane" | { within: Role[] } | { nhc: NhcGroup };

const CP: Role[] = ["controlPlane"];
/**
 * § 5.6: one NodeHealthCheck per role (and one for the Kubernetes-only control plane), in this
 * order, none overlapping: a node is in the first it matches. Segment hosts are Masakari's (none
 * in the shipped inventories); issue 14: no other node is left without one.
 */
const NHC_ORDER: NhcGroup[] = ["controlPlane", "kubernetesControlPlane", "network", "storage", "compute", "containers", "provisioning"];

const MATRIX: [RegExp, Expect][] = [
  // § 2.1 shared infrastructure
  [/openkeel-chart\/(mariadb|rabbitmq)$/, CP],
  [/\/cert-manager$|cert-manager\/(webhook|cainjector)$/, CP],
  // issue 22, item 7: a chart's hook Jobs are components too; § 2 has no row for them, they go where
  // their operator goes (cert-manager's startupapicheck, NFD's prune Job with nfd-master)
  [/cert-manager\/startupapicheck$/, CP],
  // § 2.2 OpenKeel services: every API, worker, scheduler and conductor on the control plane
  [/openkeel-(keystone|placement|glance|skyline|ovn-octavia-provider|ec2-api|zun|ironic|swift)\/(api|proxy)$/, CP],
  [/openkeel-nova\/(api|conductor|scheduler|consoleProxy|ironicAgent)$/, CP],
  [/openkeel-neutron\/(api|worker|ovnCentral)$/, CP],
  [/openkeel-(cinder|manila|heat|barbican|designate|masakari)\/\w+$/, CP],
  [/openkeel-nova\/computeAgent$/, ["compute"]],
  [/openkeel-neutron\/chassis$/, ["compute", "network"]],
  // § 5.2: an API's Jobs ("API Deployment and its Jobs", the migration Job) run where the API does
  [/openkeel-[a-z-]+\/db-sync$/, CP],
  // § 5.2: the Neutron extensions' APIs on the control plane; the VPNaaS agent follows the chassis
  [/openkeel-neutron-(fwaas|vpnaas)\/api$/, CP],
  [/openkeel-neutron-vpnaas\/agent$/, ["compute", "network"]],
  // § 2.2: Zun's containers run with the kata RuntimeClass, whose scheduling selects containers nodes
  [/openkeel-zun-runtime-class\/kata$/, ["containers"]],
  [/openkeel-neutron\/metadataAgent$/, ["compute"]],
  [/openkeel-neutron\/bgpAgent$/, ["network", "compute"]],
  [/openkeel-chart\/ingress$/, ["controlPlane", "network"]],
  [/openkeel-swift\/storage$/, ["storage"]],
  [/openkeel-ironic\/conductor$/, ["provisioning"]],
  [/openkeel-zun\/computeAgent$/, ["containers"]],
  [/virt-api\+virt-controller$/, CP],
  // § 2.2 puts virt-operator on the control plane; its release requires the Kubernetes control
  // plane, which docs/design-decisions.md accepts (in large: the Kubernetes-only nodes)
  [/kubevirt-operator\/virt-operator$/, "kubernetes control plane"],
  [/cdi-operator\/cdi-operator$/, CP],
  // OLM's own operators are operators' controllers (§ 2.3): the control plane
  [/olm\/(olm-operator|catalog-operator)$/, CP],
  [/virt-handler$/, ["compute"]],
  [/cdi-infra$/, CP],
  [/cdi-importer\+cloner\+upload$/, ["storage"]],
  [/self-node-remediation-agent$/, "every node"],
  // § 2.3 platform operators and agents
  [/mariadb-operator\/(mariadb-operator|webhook|certController)$/, CP],
  [/rabbitmq.*operator/, CP],
  [/snapshot-controller$/, CP],
  // § 2.2: Medik8s NHC operator, Node Maintenance operator (and SNR's controller): control plane
  [/(node-healthcheck-operator|node-maintenance-operator|self-node-remediation)\/operator$/, CP],
  // issue 14: the Job that approves the pinned Medik8s versions runs where the operators do
  [/install-plan-approver\/job$/, CP],
  // Longhorn's hook Jobs take the manager's tolerations and no selector (issue 22, item 7)
  [
    /longhorn-(manager|csi-plugin\+instance-managers|pre-upgrade|post-upgrade\+uninstall)$/,
    ["controlPlane", "compute", "storage", "containers", "provisioning"],
  ],
  [/longhorn-(driver-deployer|ui)$/, CP],
  // § 2.3 puts the CSI sidecars on the control plane (or storage); at 1.12.1 longhorn-manager gives
  // them the CSI plugin's system-managed selector and taint toleration, which must reach every node
  // that mounts a volume (research note L3): a deviation (docs/design-decisions.md)
  [/longhorn\/csi-(attacher|provisioner|resizer|snapshotter)$/, ["controlPlane", "compute", "storage", "containers", "provisioning"]],
  // § 2.3: Longhorn RWX share managers (Manila) on storage nodes
  [/longhorn-rwx\/share-manager$/, ["storage"]],
  // § 2.3 says disks only on storage nodes, but D5 (§ 2.1) puts Galera, RabbitMQ and OVN central on
  // strict-local volumes, which live on their pod's node: control-plane nodes need a disk too.
  [/longhorn-default-disks$/, ["controlPlane", "storage"]],
  [/kube-ovn\/(ovn-central|kube-ovn-controller|kube-ovn-monitor)$/, { within: CP }],
  // the chart's hook Jobs tolerate every NoSchedule taint and select nothing (issue 22, item 7)
  [/kube-ovn\/post-delete-hook\+upgrade-hooks$/, "every node"],
  [/kube-ovn-cni\+ovs-ovn\+pinger$/, "every node"],
  [/kube-multus-ds$/, "every node"],
  // the ingress VIP (D8): speakers where the ingress runs, the controller on the control plane
  [/metallb-placement\/speaker$/, ["controlPlane", "network"]],
  [/metallb-placement\/controller$/, CP],
  // § 2.3: Node Feature Discovery on every node (its master and garbage collector are operators)
  [/nfd-worker$/, "every node"],
  [/nfd-(master|gc|prune)$/, CP],
  [/kubernetes-control-plane\/remediates$/, { nhc: "kubernetesControlPlane" }],
  [/control-plane\/remediates$/, { nhc: "controlPlane" }],
  [/network(-[a-z0-9-]+)?\/remediates$/, { nhc: "network" }],
  [/storage(-[a-z0-9-]+)?\/remediates$/, { nhc: "storage" }],
  [/compute(-[a-z0-9-]+)?\/remediates$/, { nhc: "compute" }],
  [/containers(-[a-z0-9-]+)?\/remediates$/, { nhc: "containers" }],
  [/provisioning(-[a-z0-9-]+)?\/remediates$/, { nhc: "provisioning" }],
];

function nodesOf(cfg: LoadedConfig, roles: Role[]): string[] {
  return cfg.nodes
    .filter((n) => n.roles.some((r) => roles.includes(r)))
    .map((n) => n.name)
    .sort();
}

function expectedNodes(cfg: LoadedConfig, e: Expect): string[] {
  if (e === "every node") return cfg.nodes.map((n) => n.name).sort();
  if (e === "kubernetes control plane")
    return cfg.nodes
      .filter((n) => n.kubernetesControlPlane)
      .map((n) => n.name)
      .sort();
  if (Array.isArray(e)) return nodesOf(cfg, e);
  if ("nhc" in e) {
    const has = (n: LoadedConfig["nodes"][number], g: NhcGroup) => (g === "kubernetesControlPlane" ? n.kubernetesControlPlane : n.roles.includes(g));
    const earlier = NHC_ORDER.slice(0, NHC_ORDER.indexOf(e.nhc));
    // a node whose state leaves the health checks (maintenance, retiring) is in none (docs/node-lifecycle.md)
    return cfg.nodes
      .filter((n) => has(n, e.nhc) && !earlier.some((g) => has(n, g)) && !hasTrait(n.state, "leavesHealthChecks"))
      .map((n) => n.name)
      .sort();
  }
  return nodesOf(cfg, e.within);
}

/**
 * A NodeHealthCheck of a group that holds no quorum, in a stack whose nodes have zones, selects one
 * zone (its name's suffix), or, without a suffix, the group's nodes of every zone that has no check
 * of its own (those alone in their zone, or without one: platform/medik8s-groups.ts). `names`: the
 * report's components, among them the group's other checks.
 */
function nhcZone(cfg: LoadedConfig, e: Expect, name: string, nodes: string[], names: readonly string[]): string[] {
  if (typeof e !== "object" || Array.isArray(e) || !("nhc" in e) || e.nhc === "controlPlane" || e.nhc === "kubernetesControlPlane") return nodes;
  // ours (platform/medik8s.ts); the synthetic units of ./design-units.ts keep one check per group
  if (!name.startsWith("medik8s-remediation/") || !cfg.nodes.some((n) => n.zone !== undefined)) return nodes;
  const suffixOf = (n: string) => new RegExp(`${e.nhc}(?:-([a-z0-9-]+))?/remediates$`).exec(n)?.[1];
  const suffix = suffixOf(name);
  const zoneOf = new Map(
    cfg.nodes.map((n) => [
      n.name,
      n.zone === undefined
        ? undefined
        : n.zone
            .toLowerCase()
            .replace(/[^a-z0-9-]+/g, "-")
            .replace(/^-+|-+$/g, ""),
    ]),
  );
  if (suffix !== undefined) return nodes.filter((n) => zoneOf.get(n) === suffix);
  const own = new Set(names.filter((n) => n.startsWith("medik8s-remediation/")).map(suffixOf));
  return nodes.filter((n) => zoneOf.get(n) === undefined || !own.has(zoneOf.get(n)));
}

/** Compares every placement with its row; returns the names of components without a row. */
export function checkMatrix(cfg: LoadedConfig, report: PlacementReport, expect: (actual: unknown, message?: string) => any): void {
  for (const p of report.placements) {
    const row = MATRIX.find(([re]) => re.test(p.component.name));
    expect(row, `no § 2 row for ${p.component.name}`).toBeDefined();
    const e = row![1];
    const got = [...p.eligible].sort();
    if (typeof e === "object" && !Array.isArray(e) && "within" in e) {
      expect(got.length, p.component.name).toBeGreaterThan(0);
      for (const n of got) expect(expectedNodes(cfg, e), `${p.component.name} on ${n}`).toContain(n);
    } else {
      const names = report.placements.map((x) => x.component.name);
      expect(got, p.component.name).toEqual(nhcZone(cfg, e, p.component.name, expectedNodes(cfg, e), names));
    }
  }
}
