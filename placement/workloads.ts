// Every component's scheduling, read from what the Plan renders: OpenKeel releases from their
// placement values through the chart helper's rules (§ 5.2, `resolvePlacement`), platform
// components from their chart values (Longhorn, Kube-OVN, cert-manager, operators) and CRs
// (KubeVirt, CDI, MariaDB, RabbitmqCluster, NodeHealthCheck, SelfNodeRemediationConfig), and any
// Deployment, StatefulSet or DaemonSet object a unit writes. Upstream behaviours that no rendered
// value shows (defaults an operator adds) are stated where they are used, with their source.
import type { Component, ComponentKind, ComponentSource, DesignRoles } from "./report";
import { resolvePlacement, type Affinity, type Placement, type Scheduling } from "./chart-helper";
import type { HelmReleaseUnit, K8sObject, ManifestsUnit, Plan, RemoteManifestUnit, Unit } from "../plan/plan";
import { HOSTNAME_LABEL, K8S_CONTROL_PLANE_LABEL, ROLES, roleLabelKey, roleTaint, type LabelProfile, type Role, type Toleration } from "../config/roles";
import { requiredAntiAffinityKeys, type LabelSelector, type PodScheduling } from "./scheduling";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const obj = (v: unknown): Obj => (isObj(v) ? v : {});
const arr = <T = unknown>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);
const strMap = (v: unknown): Record<string, string> | undefined =>
  isObj(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, String(x)])) : undefined;
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/** What the design says about a component (§ 2): its roles, and where it must never be. */
export interface DesignRow {
  kind: ComponentKind;
  roles: DesignRoles;
  confinedTo?: Role;
  forbiddenRoles?: Role[];
}

const CP: Role[] = ["controlPlane"];
/** Tenant workloads (VMs, Zun containers and what serves them) stay off provisioning nodes (§ 1.4). */
const TENANT = { forbiddenRoles: ["provisioning"] as Role[] };

/**
 * OpenKeel components by chart and placement key (§ 2.1, § 2.2, § 5.1). A key not listed is a
 * Deployment on the chart's default role, the control plane (§ 5.2).
 */
export const OPENKEEL_DESIGN: Record<string, Record<string, DesignRow>> = {
  "openkeel-chart": {
    mariadb: { kind: "StatefulSet", roles: CP, confinedTo: "controlPlane" },
    rabbitmq: { kind: "StatefulSet", roles: CP, confinedTo: "controlPlane" },
    ingress: { kind: "DaemonSet", roles: ["controlPlane", "network"] },
  },
  "openkeel-nova": {
    computeAgent: { kind: "DaemonSet", roles: ["compute"], ...TENANT },
  },
  "openkeel-neutron": {
    ovnCentral: { kind: "StatefulSet", roles: CP },
    chassis: { kind: "DaemonSet", roles: ["compute", "network"] },
    metadataAgent: { kind: "DaemonSet", roles: ["compute"] },
    bgpAgent: { kind: "DaemonSet", roles: ["network", "compute"] },
  },
  "openkeel-swift": {
    storage: { kind: "StatefulSet", roles: ["storage"] },
  },
  "openkeel-ironic": {
    conductor: { kind: "StatefulSet", roles: ["provisioning"], confinedTo: "provisioning" },
  },
  "openkeel-zun": {
    computeAgent: { kind: "DaemonSet", roles: ["containers"], ...TENANT },
  },
};

const OPENKEEL_DEFAULT: DesignRow = { kind: "Deployment", roles: CP };

export function openkeelDesign(chart: string, key: string): DesignRow {
  return OPENKEEL_DESIGN[chart]?.[key] ?? OPENKEEL_DEFAULT;
}

/**
 * Longhorn's manager and CSI plugin: "every node that consumes or stores volumes" (§ 2.3): the
 * control plane (Galera, RabbitMQ, OVN central PVCs), hypervisors (VM disks), storage (replicas,
 * Swift), containers (Zun volumes) and provisioning (the conductor's image cache). Network nodes run
 * no volume (§ 1.2), although § 5.3's example taintToleration lists them.
 */
export const LONGHORN_ROLES: Role[] = ["controlPlane", "compute", "storage", "containers", "provisioning"];

// ---------------------------------------------------------------------------------------------
// OpenKeel releases

interface NodeRolesValue {
  roles?: Record<string, { label?: string; taint?: { key?: string; effect?: Toleration["effect"] } }>;
}

/**
 * The chart helper reads label and taint of a role from `global.nodeRoles`: resolve with the
 * profile's keys, then use the keys the values actually pass, so that a wrong key in the values
 * shows as a wrong selector here too.
 */
function helperScheduling(p: Placement, nodeRoles: NodeRolesValue | undefined, profile: LabelProfile, defaultRole: Role): Scheduling {
  if (nodeRoles === undefined) {
    // No global.nodeRoles (a lab that sets no roles): the helper renders no role selector or
    // toleration, only the raw fields and extra tolerations (§ 5.2).
    const { role: _r, roles: _rs, ...raw } = p;
    return resolvePlacement(raw, { profile });
  }
  const s = resolvePlacement(p, { profile, defaultRole });
  const labelOf = new Map<string, string>();
  const taintOf = new Map<string, { key?: string; effect?: Toleration["effect"] }>();
  for (const role of ROLES) {
    const r = nodeRoles.roles?.[role];
    labelOf.set(roleLabelKey(role, profile), r?.label ?? `<no label for ${role} in global.nodeRoles>`);
    if (r?.taint) taintOf.set(roleTaint(role).key, r.taint);
  }
  const mapKey = (k: string) => labelOf.get(k) ?? k;
  const out: Scheduling = { ...s };
  if (s.nodeSelector && p.nodeSelector === undefined) {
    out.nodeSelector = Object.fromEntries(Object.entries(s.nodeSelector).map(([k, v]) => [mapKey(k), v]));
  }
  if (s.affinity && p.affinity === undefined) {
    const terms = s.affinity.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
    out.affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: terms.map((t) => ({ matchExpressions: (t.matchExpressions ?? []).map((e) => ({ ...e, key: mapKey(e.key) })) })),
        },
      },
    };
  }
  if (p.tolerations === undefined) {
    out.tolerations = s.tolerations.map((t) => {
      const passed = t.key !== undefined ? taintOf.get(t.key) : undefined;
      return passed ? { ...t, key: passed.key, effect: passed.effect } : t;
    });
  }
  return out;
}

interface PlacementValue extends Placement {
  enabled?: boolean;
  replicas?: number;
}

const PLACEMENT_KEYS = [
  "role",
  "roles",
  "nodeSelector",
  "tolerations",
  "extraTolerations",
  "affinity",
  "antiAffinity",
  "topologySpreadConstraints",
  "priorityClassName",
  "enabled",
];
/** One component's placement value, as opposed to a map of them (`placement.<component>`). */
const isPlacementValue = (v: unknown): v is PlacementValue => isObj(v) && Object.keys(v).some((k) => PLACEMENT_KEYS.includes(k));

/** `placement.<component>` maps and `<component>.placement` values of one release (§ 5.1). */
function placementEntries(values: Obj): [string, PlacementValue, Obj][] {
  const out: [string, PlacementValue, Obj][] = [];
  const visit = (parent: Obj, depth: number) => {
    for (const [key, v] of Object.entries(parent)) {
      if (key === "global" || !isObj(v)) continue;
      if (key === "placement") {
        if (!isPlacementValue(v)) for (const [k, p] of Object.entries(v)) if (isObj(p)) out.push([k, p as PlacementValue, {}]);
      } else if (isObj(v.placement) && isPlacementValue(v.placement)) out.push([key, v.placement, v]);
      else if (depth < 1) visit(v, depth + 1);
    }
  };
  visit(values, 0);
  return out;
}

function replicasOf(values: Obj, key: string, p: PlacementValue, holder: Obj): number | undefined {
  return num(p.replicas) ?? num(holder.replicas) ?? num(obj(values.replicas)[key]) ?? num(obj(values[key]).replicas);
}

function isEnabled(p: PlacementValue, holder: Obj): boolean {
  return p.enabled !== false && holder.enabled !== false;
}

function openkeelComponents(u: HelmReleaseUnit, profile: LabelProfile): Component[] {
  const values = u.values as Obj;
  const nodeRoles = isObj(obj(values.global).nodeRoles) ? (obj(values.global).nodeRoles as NodeRolesValue) : undefined;
  const out: Component[] = [];
  for (const [key, p, holder] of placementEntries(values)) {
    if (!isEnabled(p, holder)) continue;
    const design = openkeelDesign(u.chart.chart, key);
    const scheduling = helperScheduling(p, nodeRoles, profile, "controlPlane");
    const anti = [
      ...(p.antiAffinity === "required" ? [HOSTNAME_LABEL] : []),
      ...requiredAntiAffinityKeys(scheduling.affinity),
    ];
    const replicas = design.kind === "DaemonSet" ? undefined : replicasOf(values, key, p, holder);
    out.push({
      name: `${u.name}/${key}`,
      source: "openkeel",
      unit: u.name,
      kind: design.kind,
      ...(replicas !== undefined ? { replicas } : {}),
      scheduling: { nodeSelector: scheduling.nodeSelector, affinity: scheduling.affinity, tolerations: scheduling.tolerations },
      ...(anti.length > 0 ? { requiredAntiAffinity: [...new Set(anti)] } : {}),
      designRoles: design.roles,
      ...(design.confinedTo ? { confinedTo: design.confinedTo } : {}),
      ...(design.forbiddenRoles ? { forbiddenRoles: design.forbiddenRoles } : {}),
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Platform: helpers

function podScheduling(spec: Obj, extra: Partial<PodScheduling> = {}): PodScheduling {
  return {
    nodeSelector: { ...(strMap(spec.nodeSelector) ?? {}), ...(extra.nodeSelector ?? {}) },
    ...(isObj(spec.affinity) ? { affinity: spec.affinity as Affinity } : {}),
    tolerations: [...arr<Toleration>(spec.tolerations), ...(extra.tolerations ?? [])],
    ...(spec.hostNetwork === true ? { hostNetwork: true } : {}),
  };
}

function platform(
  u: Unit,
  id: string,
  kind: ComponentKind,
  scheduling: PodScheduling,
  designRoles: DesignRoles,
  more: Partial<Component> = {},
): Component {
  return { name: `${u.name}/${id}`, source: "platform", unit: u.name, kind, scheduling, designRoles, ...more };
}

/**
 * Longhorn's string formats (longhorn-manager types/setting.go): tolerations `key=value:Effect`
 * (Equal) or `key:Effect` (Exists), `;`-separated; node selector `key:value;key2:value2`.
 */
export function parseLonghornTolerations(s: unknown): Toleration[] {
  if (typeof s !== "string") return [];
  return s
    .split(";")
    .map((x) => x.trim())
    .filter((x) => x.length > 0)
    .map((entry) => {
      const i = entry.lastIndexOf(":");
      const kv = i >= 0 ? entry.slice(0, i) : entry;
      const effect = (i >= 0 ? entry.slice(i + 1) : "") as Toleration["effect"] | "";
      const eq = kv.indexOf("=");
      const t: Toleration = eq >= 0 ? { key: kv.slice(0, eq), operator: "Equal", value: kv.slice(eq + 1) } : { key: kv, operator: "Exists" };
      if (effect) t.effect = effect;
      return t;
    });
}

export function parseLonghornNodeSelector(s: unknown): Record<string, string> {
  if (typeof s !== "string") return {};
  const out: Record<string, string> = {};
  for (const entry of s.split(";").map((x) => x.trim()).filter((x) => x.length > 0)) {
    const i = entry.indexOf(":");
    out[(i >= 0 ? entry.slice(0, i) : entry).trim()] = i >= 0 ? entry.slice(i + 1).trim() : "";
  }
  return out;
}

/** Longhorn chart: a component's value replaces the global one when non-empty (`default`). */
function longhornPick(values: Obj, component: string, field: "nodeSelector" | "tolerations"): unknown {
  const own = obj(values[component])[field];
  const empty = own === undefined || own === null || (Array.isArray(own) ? own.length === 0 : isObj(own) && Object.keys(own).length === 0);
  return empty ? obj(values.global)[field] : own;
}

function longhornComponents(u: HelmReleaseUnit): Component[] {
  const v = u.values as Obj;
  const settings = obj(v.defaultSettings);
  const user = (component: string): PodScheduling =>
    podScheduling({ nodeSelector: longhornPick(v, component, "nodeSelector"), tolerations: longhornPick(v, component, "tolerations") });
  const manager = user("longhornManager");
  const systemManaged: PodScheduling = {
    nodeSelector: parseLonghornNodeSelector(settings.systemManagedComponentsNodeSelector),
    tolerations: parseLonghornTolerations(settings.taintToleration),
  };
  const diskLabelled = settings.createDefaultDiskLabeledNodes === true || settings.createDefaultDiskLabeledNodes === "true";
  return [
    platform(u, "longhorn-manager", "DaemonSet", manager, LONGHORN_ROLES),
    platform(u, "longhorn-csi-plugin+instance-managers", "DaemonSet", systemManaged, LONGHORN_ROLES),
    platform(u, "longhorn-driver-deployer", "Deployment", user("longhornDriver"), CP),
    platform(u, "longhorn-ui", "Deployment", user("longhornUI"), CP, { replicas: num(obj(v.longhornUI).replicas) ?? 2 }),
    // Disks: a node gets a default disk when longhorn-manager runs there and, with
    // createDefaultDiskLabeledNodes, it carries node.longhorn.io/create-default-disk=true|config.
    // Storage nodes hold the replicas (§ 2.3); control-plane nodes the strict-local volumes of D5.
    platform(u, "longhorn-default-disks", "LonghornDisks", manager, ["controlPlane", "storage"], {
      ...(diskLabelled
        ? { nodeSelection: { matchExpressions: [{ key: "node.longhorn.io/create-default-disk", operator: "In", values: ["true", "config"] }] } }
        : { nodeSelection: {} }),
    }),
  ];
}

/**
 * Kube-OVN v1 chart (templates/central-deploy.yaml): central and controller select
 * MASTER_NODES_LABEL as a nodeSelector (`key=value`, or `key` for an empty value), ovn-central has
 * one replica per master with required anti-affinity on the host, and everything tolerates every
 * NoSchedule and NoExecute taint.
 */
function kubeOvnComponents(u: HelmReleaseUnit): Component[] {
  const v = u.values as Obj;
  const label = typeof v.MASTER_NODES_LABEL === "string" ? v.MASTER_NODES_LABEL : "kube-ovn/role=master";
  const [key, value] = label.split("=");
  const everything: Toleration[] = [
    { operator: "Exists", effect: "NoSchedule" },
    { operator: "Exists", effect: "NoExecute" },
  ];
  const masters = typeof v.MASTER_NODES === "string" ? v.MASTER_NODES.split(",").filter((x) => x.trim().length > 0).length : undefined;
  const central: PodScheduling = { nodeSelector: { "kubernetes.io/os": "linux", [key]: value ?? "" }, tolerations: everything, hostNetwork: true };
  const ds: PodScheduling = { nodeSelector: { "kubernetes.io/os": "linux" }, tolerations: everything, hostNetwork: true };
  return [
    platform(u, "ovn-central", "Deployment", central, CP, {
      ...(masters !== undefined ? { replicas: masters } : {}),
      requiredAntiAffinity: [HOSTNAME_LABEL],
    }),
    platform(u, "kube-ovn-controller", "Deployment", central, CP),
    platform(u, "kube-ovn-cni+ovs-ovn+pinger", "DaemonSet", ds, "allNodes"),
  ];
}

/** Charts with top-level nodeSelector/tolerations/affinity for the operator (and sub-components). */
function operatorChartComponents(u: HelmReleaseUnit, subs: string[]): Component[] {
  const v = u.values as Obj;
  const globalSel = strMap(obj(v.global).nodeSelector) ?? {};
  const top = podScheduling({ ...v, nodeSelector: { ...globalSel, ...(strMap(v.nodeSelector) ?? {}) } });
  const out = [platform(u, u.chart.chart, "Deployment", top, CP)];
  for (const s of subs) {
    const sv = obj(v[s]);
    if (sv.enabled === false) continue;
    out.push(platform(u, s, "Deployment", podScheduling({ ...sv, nodeSelector: { ...globalSel, ...(strMap(sv.nodeSelector) ?? {}) } }), CP));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Platform: CRs and objects

const KUBEVIRT_OS: Record<string, string> = { "kubernetes.io/os": "linux" };

function nodePlacement(np: unknown, extraSelector: Record<string, string> = {}): PodScheduling {
  const p = obj(np);
  return podScheduling(p, { nodeSelector: extraSelector });
}

function objectComponents(u: ManifestsUnit, o: K8sObject): Component[] {
  const spec = obj(o.spec);
  const id = (s: string) => `${o.metadata.name}/${s}`;
  switch (o.kind) {
    case "KubeVirt": {
      // virt-operator always adds kubernetes.io/os=linux; without infra.nodePlacement it puts
      // virt-api/controller on the Kubernetes control plane (placement.go@v1.9.0).
      const infra = obj(spec.infra);
      const infraSched: PodScheduling = isObj(infra.nodePlacement)
        ? nodePlacement(infra.nodePlacement, KUBEVIRT_OS)
        : {
            nodeSelector: KUBEVIRT_OS,
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: {
                  nodeSelectorTerms: [{ matchExpressions: [{ key: K8S_CONTROL_PLANE_LABEL, operator: "Exists" }] }],
                },
              },
            },
            tolerations: [{ key: K8S_CONTROL_PLANE_LABEL, operator: "Exists", effect: "NoSchedule" }],
          };
      return [
        platform(u, id("virt-api+virt-controller"), "Deployment", infraSched, CP, { replicas: num(infra.replicas) ?? 2 }),
        platform(u, id("virt-handler"), "DaemonSet", nodePlacement(obj(spec.workloads).nodePlacement, KUBEVIRT_OS), ["compute"], TENANT),
      ];
    }
    case "CDI":
      // CDI's NodePlacement is inline (spec.infra, spec.workload: singular), not under nodePlacement.
      return [
        platform(u, id("cdi-infra"), "Deployment", nodePlacement(spec.infra), CP),
        platform(u, id("cdi-importer+cloner+upload"), "Pods", nodePlacement(spec.workload), ["storage"]),
      ];
    case "MariaDB": {
      const aff = obj(spec.affinity);
      const { antiAffinityEnabled, ...affinity } = aff;
      return [
        platform(u, id("galera"), "StatefulSet", podScheduling({ ...spec, affinity }), CP, {
          replicas: num(spec.replicas) ?? 1,
          confinedTo: "controlPlane",
          requiredAntiAffinity: [...new Set([...(antiAffinityEnabled === true ? [HOSTNAME_LABEL] : []), ...requiredAntiAffinityKeys(affinity as Affinity)])],
        }),
      ];
    }
    case "RabbitmqCluster": {
      const tpl = obj(obj(obj(obj(obj(spec.override).statefulSet).spec).template).spec);
      const affinity = spec.affinity as Affinity | undefined;
      return [
        platform(u, id("rabbitmq"), "StatefulSet", podScheduling({ ...spec, nodeSelector: tpl.nodeSelector }), CP, {
          replicas: num(spec.replicas) ?? 1,
          confinedTo: "controlPlane",
          requiredAntiAffinity: requiredAntiAffinityKeys(affinity),
        }),
      ];
    }
    case "NodeHealthCheck": {
      const sel = spec.selector as LabelSelector | undefined;
      return [platform(u, id("remediates"), "NodeHealthCheck", { tolerations: [] }, nhcDesignRoles(sel), { nodeSelection: sel ?? {} })];
    }
    case "SelfNodeRemediationConfig":
      // The agent DaemonSet as the operator renders it (install/self-node-remediation-deamonset.yaml:
      // its own tolerations, the exclude-from-remediation affinity), plus customDsTolerations; the
      // design wants it on every node it may fence (§ 5.6).
      return [
        platform(
          u,
          id("self-node-remediation-agent"),
          "DaemonSet",
          {
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: {
                  nodeSelectorTerms: [
                    { matchExpressions: [{ key: "remediation.medik8s.io/exclude-from-remediation", operator: "NotIn", values: ["true"] }] },
                  ],
                },
              },
            },
            tolerations: [
              { key: "medik8s.io/remediation", operator: "Equal", value: "self-node-remediation", effect: "NoExecute" },
              { key: "node-role.kubernetes.io/master", operator: "Equal", effect: "NoSchedule" },
              { key: K8S_CONTROL_PLANE_LABEL, operator: "Equal", effect: "NoSchedule" },
              ...arr<Toleration>(spec.customDsTolerations),
            ],
          },
          "allNodes",
        ),
      ];
    case "Subscription": {
      // OLM applies spec.config's nodeSelector, tolerations and affinity to the operator's
      // Deployments (Medik8s operators, § 2.2: control plane).
      const config = obj(spec.config);
      return [platform(u, `${o.metadata.name}/operator`, "Deployment", podScheduling(config), CP)];
    }
    case "Deployment":
    case "StatefulSet":
    case "DaemonSet": {
      const tpl = obj(obj(spec.template).spec);
      const kind = o.kind;
      return [
        platform(u, o.metadata.name, kind, podScheduling(tpl), kind === "DaemonSet" ? "allNodes" : CP, {
          ...(kind !== "DaemonSet" ? { replicas: num(spec.replicas) ?? 1 } : {}),
          ...(requiredAntiAffinityKeys(tpl.affinity as Affinity).length > 0
            ? { requiredAntiAffinity: requiredAntiAffinityKeys(tpl.affinity as Affinity) }
            : {}),
        }),
      ];
    }
    default:
      return [];
  }
}

/** A NodeHealthCheck's design roles: the roles whose label its selector requires. */
function nhcDesignRoles(sel: LabelSelector | undefined): DesignRoles {
  const keys = [...Object.keys(sel?.matchLabels ?? {}), ...(sel?.matchExpressions ?? []).filter((e) => e.operator === "Exists" || e.operator === "In").map((e) => e.key)];
  const roles = ROLES.filter((r) => keys.includes(roleLabelKey(r, "hardened")) || keys.includes(roleLabelKey(r, "default")));
  return roles.length > 0 ? roles : "all";
}

/**
 * Upstream manifests applied from a pinned URL: their scheduling is what the tagged manifest says
 * (PLATFORM-FACTS § 5: the Multus thick DaemonSet tolerates every NoSchedule and NoExecute taint).
 */
function remoteComponents(u: RemoteManifestUnit): Component[] {
  if (/multus-daemonset-thick/.test(u.url)) {
    return [
      platform(
        u,
        "kube-multus-ds",
        "DaemonSet",
        { tolerations: [{ operator: "Exists", effect: "NoSchedule" }, { operator: "Exists", effect: "NoExecute" }], hostNetwork: true },
        "allNodes",
      ),
    ];
  }
  return [];
}

// ---------------------------------------------------------------------------------------------

function chartSource(u: HelmReleaseUnit): ComponentSource {
  return u.chart.chart.startsWith("openkeel") ? "openkeel" : "platform";
}

/** Every component of the Plan that places pods (or selects nodes), in Plan order. */
export function planComponents(plan: Plan): Component[] {
  const out: Component[] = [];
  for (const ph of plan.phases) {
    for (const u of ph.units) {
      if (u.kind === "HelmRelease") {
        if (chartSource(u) === "openkeel") out.push(...openkeelComponents(u, plan.labelProfile));
        else if (u.chart.chart === "longhorn") out.push(...longhornComponents(u));
        else if (u.chart.chart === "kube-ovn") out.push(...kubeOvnComponents(u));
        else if (u.chart.chart === "cert-manager") out.push(...operatorChartComponents(u, ["webhook", "cainjector"]));
        else if (u.chart.chart === "mariadb-operator") out.push(...operatorChartComponents(u, ["webhook", "certController"]));
      } else if (u.kind === "Manifests") {
        for (const o of u.objects) out.push(...objectComponents(u, o));
      } else {
        out.push(...remoteComponents(u));
      }
    }
  }
  return out;
}
