// MetalLB (production, where the stack gives it a pool): the public ingress VIP of D8. The pinned
// native manifest (CRDs, the privileged metallb-system namespace, controller, speaker, webhooks),
// the placement this repository gives its two workloads, and the address pool with its L2
// advertisement. Facts: /work/notes/priority-crs-taints-facts.md § 5 (v0.16.1).
//
// Placement. The manifest puts the controller on any Linux node and the speaker on every Linux node
// tolerating only the Kubernetes control-plane taint, so no speaker would run on the tainted
// network nodes, where D8 puts the ingress. The two workloads are objects of the upstream manifest,
// so this repository patches them (APPLY_AS_PATCH_ANNOTATION, server-side apply, forced: the
// manifest's field manager owns the tolerations): the speaker on the ingress nodes (controlPlane or
// network, the ingress's own placement), the controller on the control plane, both with the
// priority class of node agents and cluster services.
//
// A new pin re-applies the manifest. With the shipped tolerations in it, that apply was refused: the
// forced patch owns the speaker's tolerations (an atomic list) with another value, so server-side
// apply answers 409 and `pulumi up` stops (issue 37). The manifest is therefore applied without the
// fields the patches set (`patchedFields`, components/plan-unit.ts leaveToPatches), and the patch
// keeps them across every bump. Not forcing the manifest instead: a forced re-apply would take the
// tolerations back, the DaemonSet controller would remove the speakers from the tainted network
// nodes, and the patch would not put them back: its inputs did not change, and the provider diffs a
// resource's inputs against its own last state, never the live object (pulumi-kubernetes
// provider/pkg/provider/provider.go, Diff), so the VIP would stay unannounced until a refresh. Nor
// the patch under the manifest's field manager: server-side apply takes a manager's apply as the
// whole of what it manages, so the patch's few fields would remove everything else the manifest set.
//
// L2, not BGP, also with `openkeel:bgp`: ovn-bgp-agent's FRR holds TCP 179 on the network nodes
// (§ 3.1), where MetalLB's FRR mode would run a second one (docs/design-decisions.md).
import type { Check } from "../config/problems";
import { parseAddress, parseCidr, type Cidr } from "../config/cidr";
import { networkOf } from "../config/network";
import { INGRESS_ROLES, K8S_CONTROL_PLANE_LABEL, roleLabelKey, type Toleration } from "../config/roles";
import type { Config } from "../config/schema";
import { APPLY_AS_PATCH_ANNOTATION, type K8sObject, manifestsUnit, type ManifestsUnit, type PatchedFields } from "../plan/plan";
import { resolvePlacement, type Scheduling } from "../placement/chart-helper";
import { CONTROL_PLANE, obj, platformComponent, podScheduling, unplaced, type UnitReader } from "../placement/workloads";
import type { Topology } from "../topology/topology";
import type { PlatformComponent, UpstreamManifest } from "./component";
import { controlPlaneScheduling, pinnedManifestUnit, type Contents, type StackContext } from "./context";
import { METALLB_NATIVE } from "./versions";
import { METALLB_SETTINGS, metallbSettings, type MetallbSettings } from "./metallb-settings";
import { vipLink } from "../config/host-network";
import { fact, type KindOffers } from "../plan/needs";

const METALLB_TYPE = "openkeel:platform:MetalLB";
const METALLB_POOL_TYPE = "openkeel:platform:MetalLBPool";

export const METALLB_NAMESPACE = "metallb-system";
/** The pool of the public ingress VIP; it serves Services of OpenKeel's namespace only. */
export const METALLB_POOL = "openkeel-public";
const PLACEMENT_UNIT = "metallb-placement";
const PLACEMENT_TYPE = "openkeel:platform:MetalLBPlacement";
const LINUX: Record<string, string> = { "kubernetes.io/os": "linux" };
/**
 * The manifest's two workloads as v0.16.1 ships them (test/platform/upstream-workloads.test.ts holds them to
 * the file); the patches of metallb-placement place them, and the report reads those patches.
 */
const SHIPPED: UpstreamManifest = {
  pin: METALLB_NATIVE,
  workloads: [
    {
      kind: "DaemonSet",
      namespace: METALLB_NAMESPACE,
      name: "speaker",
      scheduling: {
        nodeSelector: LINUX,
        tolerations: [
          { key: "node-role.kubernetes.io/master", operator: "Exists", effect: "NoSchedule" },
          { key: K8S_CONTROL_PLANE_LABEL, operator: "Exists", effect: "NoSchedule" },
        ],
        hostNetwork: true,
      },
      designRoles: INGRESS_ROLES,
    },
    {
      kind: "Deployment",
      namespace: METALLB_NAMESPACE,
      name: "controller",
      replicas: 1,
      scheduling: { nodeSelector: LINUX, tolerations: [] },
      designRoles: CONTROL_PLANE,
    },
  ],
};
/** The manifest's own speaker tolerations, kept: a forced patch replaces the whole list. */
const UPSTREAM_SPEAKER_TOLERATIONS: readonly Toleration[] = SHIPPED.workloads[0].scheduling.tolerations ?? [];

/** The ingress nodes (D8), as the ingress's own placement resolves them: where speakers run and announce. */
export function ingressScheduling(ctx: Pick<StackContext, "profile">): Scheduling {
  return resolvePlacement({ roles: [...INGRESS_ROLES] }, { profile: ctx.profile });
}

/**
 * A forced server-side-apply patch of a workload of the manifest, named as the manifest names it
 * (`app: metallb`, `component: <name>`; test/integration/platform/metallb.test.ts holds both to the pinned file). The
 * selector and the container's name are the manifest's own: they make the patch a valid object for
 * kubeconform and own nothing new (containers merge by name).
 */
function patched(kind: "DaemonSet" | "Deployment", name: string, podSpec: Record<string, unknown>): K8sObject {
  return {
    apiVersion: "apps/v1",
    kind,
    metadata: { name, namespace: METALLB_NAMESPACE, annotations: { [APPLY_AS_PATCH_ANNOTATION]: "patch", "pulumi.com/patchForce": "true" } },
    spec: {
      selector: { matchLabels: { app: "metallb", component: name } },
      template: { spec: { containers: [{ name }], ...podSpec } },
    },
  };
}

/** What the placement patches set, per object: the pod-spec fields beside the containers they name only to merge by name. */
function patchedFields(patches: readonly K8sObject[]): PatchedFields[] {
  return patches.map((o) => ({
    object: `${o.kind} ${METALLB_NAMESPACE}/${o.metadata.name}`,
    fields: Object.keys(obj(obj(obj(o.spec).template).spec))
      .filter((k) => k !== "containers")
      .sort()
      .map((k) => `spec.template.spec.${k}`),
  }));
}

function placementUnit(ctx: StackContext): ManifestsUnit {
  const ingress = ingressScheduling(ctx);
  const controller = controlPlaneScheduling(ctx);
  const objects = [
    patched("DaemonSet", "speaker", {
      affinity: ingress.affinity,
      // a node agent: back on a disabled or draining node after a rollout (StackContext.agentTolerations)
      tolerations: [...UPSTREAM_SPEAKER_TOLERATIONS, ...ingress.tolerations, ...ctx.agentTolerations],
      priorityClassName: "system-node-critical",
    }),
    patched("Deployment", "controller", {
      nodeSelector: { ...LINUX, ...(controller.nodeSelector ?? {}) },
      tolerations: controller.tolerations,
      priorityClassName: "system-cluster-critical",
    }),
  ];
  return manifestsUnit(PLACEMENT_UNIT, PLACEMENT_TYPE, objects);
}

/**
 * The pool and its L2 advertisement: announced only by the speakers of the ingress nodes (one
 * selector per role: MetalLB ORs them) and only from the stack's interfaces (the manifest's
 * exclusion list does not know Kube-OVN's and OVS's interfaces). MetalLB's webhooks refuse both
 * until its controller serves them: this unit is in platform-config, after the manifest, whose
 * Deployments Pulumi waits for.
 */
function poolUnit(ctx: StackContext, settings: MetallbSettings): ManifestsUnit {
  const selectors = INGRESS_ROLES.map((role) => ({ matchExpressions: [{ key: roleLabelKey(role, ctx.profile), operator: "Exists" }] }));
  const objects: K8sObject[] = [
    {
      apiVersion: "metallb.io/v1beta1",
      kind: "IPAddressPool",
      metadata: { name: METALLB_POOL, namespace: METALLB_NAMESPACE },
      spec: { addresses: [...settings.addresses], autoAssign: true, serviceAllocation: { namespaces: ["openkeel"] } },
    },
    {
      apiVersion: "metallb.io/v1beta1",
      kind: "L2Advertisement",
      metadata: { name: METALLB_POOL, namespace: METALLB_NAMESPACE },
      spec: { ipAddressPools: [METALLB_POOL], nodeSelectors: selectors, interfaces: [...settings.interfaces] },
    },
  ];
  return manifestsUnit("metallb-pool", METALLB_POOL_TYPE, objects);
}

/** The placement report's rows: the patched pod specs, over what the manifest sets itself. */
const readPlacement: UnitReader = (u) => {
  if (u.kind !== "Manifests") return [];
  return u.objects.map((o) => {
    const spec = obj(obj(obj(o.spec).template).spec);
    const scheduling = podScheduling(spec, { nodeSelector: LINUX });
    return o.kind === "DaemonSet"
      ? platformComponent(u, o.metadata.name, "DaemonSet", { ...scheduling, hostNetwork: true }, INGRESS_ROLES)
      : platformComponent(u, o.metadata.name, "Deployment", scheduling, CONTROL_PLANE, { replicas: 1 });
  });
};

/** Where a pool entry's addresses are, as the first and last of them. */
function poolRange(entry: string): { first: bigint; last: bigint } | undefined {
  const c = parseCidr(entry);
  if (c) return { first: c.value, last: c.value + (1n << BigInt(32 - c.prefix)) - 1n };
  const [a, b] = entry.split("-").map((x) => parseAddress(x.trim()));
  return a && b ? { first: a.value, last: b.value } : undefined;
}

/** A pool that hands out the cluster's own addresses would break what holds them. */
function checks(cfg: Config, topo: Topology): Check[] {
  const settings = metallbSettings(cfg.platform);
  if (!settings) return [];
  const net = networkOf(cfg);
  const ranges: [string, string | undefined][] = [
    ["podCIDR", net.podCIDR],
    ["serviceCIDR", net.serviceCIDR],
    ["joinCIDR", net.joinCIDR],
  ];
  const out: Check[] = [];
  settings.addresses.forEach((entry, i) => {
    const r = poolRange(entry);
    if (!r) return;
    const clash = ranges.find(([, cidr]) => {
      const c = cidr ? parseCidr(cidr) : undefined;
      return c !== undefined && c.family === 4 && rangesOverlap(r, c);
    });
    const node = topo.nodes.find((n) => {
      const a = n.internalIP ? parseAddress(n.internalIP) : undefined;
      return a !== undefined && a.family === 4 && a.value >= r.first && a.value <= r.last;
    });
    if (clash || node) {
      out.push({
        level: "error",
        code: "metallb-pool",
        message: clash
          ? `${entry} overlaps openkeel:network.${clash[0]} (${clash[1]}): MetalLB would hand out addresses the cluster already routes`
          : `${entry} holds ${node!.name}'s internalIP ${node!.internalIP}: MetalLB would announce a node's own address as a VIP`,
        fix: "give the pool addresses of the public network that no node, pod or Service uses",
        path: `openkeel:platform.metallb.addresses[${i}]`,
      });
    }
  });
  return out;
}

/**
 * Where the VIP is announced from a link other than the nodes' own, its replies need their way
 * back (nodes/talos-network.ts VIP_ROUTE_TABLE): the stack names the VIP network, and every pool
 * address and its router are in it.
 */
function routeBackChecks(cfg: Config, topo: Topology): Check[] {
  const settings = metallbSettings(cfg.platform);
  if (!settings || !topo.environment.physicalNetworks) return [];
  const apart = Object.entries(cfg.hostNetworks ?? {}).filter(([, n]) => vipLink(n, settings) !== undefined);
  const vip = settings.vipNetwork;
  if (apart.length > 0 && vip === undefined) {
    const [name, n] = apart[0];
    return [
      {
        level: "error",
        code: "metallb-route-back",
        message: `the VIP is announced from ${vipLink(n, settings)} of host network '${name}'${apart.length > 1 ? ` (and ${apart.length - 1} more)` : ""}, but its replies would leave through the node's default route on ${n.nodeAddress.link} with the VIP as their source (metallb/metallb#319), which uRPF and stateful firewalls drop`,
        fix: "add vipNetwork: {cidr: <the VIP VLAN's prefix>, gateway: <its router>} to openkeel:platform.metallb: the nodes then route the VIP's replies out of its own VLAN",
        path: "openkeel:platform.metallb",
      },
    ];
  }
  const c = vip ? parseCidr(vip.cidr) : undefined;
  if (!vip || !c) return [];
  const out: Check[] = [];
  const gw = parseAddress(vip.gateway);
  if (gw && !rangesOverlap({ first: gw.value, last: gw.value }, c)) {
    out.push({
      level: "error",
      code: "metallb-route-back",
      message: `${vip.gateway} is outside ${vip.cidr}: no node could reach it on the VIP's VLAN`,
      fix: `write the router of ${vip.cidr}`,
      path: "openkeel:platform.metallb.vipNetwork.gateway",
    });
  }
  settings.addresses.forEach((entry, i) => {
    const r = poolRange(entry);
    const last = c.value + (1n << BigInt(32 - c.prefix)) - 1n;
    if (r && (r.first < c.value || r.last > last)) {
      out.push({
        level: "error",
        code: "metallb-route-back",
        message: `${entry} is not all in the VIP network ${vip.cidr}: replies from its other addresses would miss the rule`,
        fix: `give the pool addresses of ${vip.cidr}, or correct vipNetwork.cidr`,
        path: `openkeel:platform.metallb.addresses[${i}]`,
      });
    }
  });
  return out;
}

function rangesOverlap(r: { first: bigint; last: bigint }, c: Cidr): boolean {
  const last = c.value + (1n << BigInt(32 - c.prefix)) - 1n;
  return r.first <= last && c.value <= r.last;
}

/**
 * metallb-native.yaml: its namespace, the CRDs and webhooks of the pool and its advertisement
 * (metallb-pool's objects), the controller and speaker (which metallb-placement patches); both on the pod network
 * or the host's, on Linux nodes, the speakers' memberlist Secret made by the controller at run time.
 */
const METALLB_CONTENT = {
  offers: [
    ...["IPAddressPool", "L2Advertisement"].map((k) => fact.api("metallb.io", k)),
    ...["ipaddresspools", "l2advertisements"].map((r) => fact.admission("metallb.io", r)),
    fact.namespace("metallb-system"),
    fact.object("apps/DaemonSet", "metallb-system", "speaker"),
    fact.object("apps/Deployment", "metallb-system", "controller"),
  ],
  uses: [fact.podNetwork, fact.nodeLabel("kubernetes.io/os"), fact.secret("metallb-system", "memberlist")],
};
const METALLB_CONTENTS: Contents = { "v0.16.1": METALLB_CONTENT, "v0.16.0": METALLB_CONTENT };

/**
 * A pool offers the addresses a LoadBalancer Service gets: MetalLB's controller gives a Service no
 * address while it has no pool (metallb@v0.16.1 controller/service.go:62-66) and allocates it from
 * the pools (allocateIPs, :252-298); Pulumi waits for that address, so such a Service waits for the pool's unit.
 */
const KIND_OFFERS: KindOffers = { "metallb.io/IPAddressPool": () => [fact.loadBalancer] };

export const metallb: PlatformComponent = {
  name: "MetalLB",
  docs: [
    {
      component: "MetalLB",
      version: "v0.16.1",
      installedAs:
        "remote manifest `metallb-native.yaml` (CRDs, the privileged `metallb-system` namespace, controller, speaker, six fail-closed webhooks) + our server-side-apply patches of its two workloads (unit `metallb-placement`; the manifest is applied without the fields they set, so a newer manifest re-applies without a field conflict: [why](design-decisions.md)) + our `IPAddressPool`/`L2Advertisement` `openkeel-public` (unit `metallb-pool`, platform-config: after the controller that serves the webhooks, which Pulumi waits for)",
      phase: "crds-operators / platform / platform-config",
      where:
        "speaker (host network) on the ingress nodes, controlPlane or network (D8: a required node affinity OR-ing the two role labels, their taints tolerated besides the manifest's own, `system-node-critical`); controller on the control plane (`system-cluster-critical`); the VIP announced in L2 by the ingress nodes' speakers only (`nodeSelectors`), from `openkeel:platform.metallb.interfaces`; only with `openkeel:platform.metallb`",
      stacks: "production (medium, large)",
    },
  ],
  // the ingress VIP (D8): speakers where the ingress runs, the controller on the control plane
  design: [
    { workloads: /metallb-placement\/speaker$/, reach: ["controlPlane", "network"] },
    { workloads: /metallb-placement\/controller$/, reach: ["controlPlane"] },
  ],
  pins: [METALLB_NATIVE],
  upstream: [SHIPPED],
  settings: METALLB_SETTINGS,
  // the speakers of the ingress nodes announce the VIP from the stack's interfaces only (the L2Advertisement's)
  host: (ctx) => {
    const interfaces = metallbSettings(ctx.platform)?.interfaces ?? [];
    if (interfaces.length === 0) return {};
    return {
      needs: [
        {
          component: `${PLACEMENT_UNIT}/speaker`,
          needs: [
            {
              kind: "interface",
              anyOf: interfaces,
              // metallb@v0.16.1 speaker/layer2_controller.go:83-146: the owner is elected without
              // looking at interfaces, and does not announce when it has none of them;
              // internal/layer2/announcer.go:89-101: no ARP on an interface that has a master
              why: "D8: the node elected to announce the ingress VIP answers ARP on one of the L2Advertisement's interfaces that has no master (no bond, no OVS bridge), and if it has none, nobody announces the VIP",
              fix: "announce from an interface every ingress node has and nothing enslaves (a VLAN of the node's bond, e.g. bond0.100, declared in openkeel:hostNetworks), and list it in openkeel:platform.metallb.interfaces",
              configPath: "openkeel:platform.metallb.interfaces",
              free: true,
            },
          ],
        },
      ],
    };
  },
  artifacts: { metallb: METALLB_CONTENTS },
  kindOffers: KIND_OFFERS,
  // its pool (the stack's block) gives a LoadBalancer Service its address: the ingress VIP of D8
  loadBalancer: (ctx) => metallbSettings(ctx.platform) !== undefined,
  units: (ctx) => {
    const settings = metallbSettings(ctx.platform);
    if (!settings) return {};
    const placement = placementUnit(ctx);
    return {
      // It holds the CRDs: deleting them deletes the pool, and the VIP with it.
      "crds-operators": [
        pinnedManifestUnit("metallb", METALLB_TYPE, METALLB_NATIVE, METALLB_CONTENTS, {
          protect: true,
          patchedFields: patchedFields(placement.objects),
        }),
      ],
      platform: [placement],
      "platform-config": [poolUnit(ctx, settings)],
    };
  },
  readers: {
    units: {
      [METALLB_TYPE]: unplaced("upstream manifest: its controller and speaker are placed by the metallb-placement patches"),
      [PLACEMENT_TYPE]: readPlacement,
      [METALLB_POOL_TYPE]: unplaced("a pool and its advertisement: no pods"),
    },
  },
  checks: (cfg, topo) => [...checks(cfg, topo), ...routeBackChecks(cfg, topo)],
};
