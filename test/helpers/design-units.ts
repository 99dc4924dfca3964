// Plan units shaped as the design writes them (§ 4.4 KubeVirt/CDI CRs, § 5.1 OpenKeel values,
// § 5.3 platform values, § 5.6 Medik8s), built here from the design text so that the placement
// report can be tested before (and independently of) the platform and OpenKeel modules.
import { phase, type HelmReleaseUnit, type ManifestsUnit, type Plan, type RemoteManifestUnit } from "../../plan/plan";
import { chassisLabelKey, type LabelProfile, RESERVED_TAINT_KEY, type Role, roleLabelKey, ROLES, roleTaint } from "../../config/roles";
import { openkeelDesign } from "../../openkeel/design";
import { unlistedComponents, unlistedPostRender } from "../../openkeel/unlisted";
import { antiAffinityPostRender } from "../../openkeel/zone-spread";

/** § 5.6 NodeHealthChecks in precedence order: the OpenKeel and the Kubernetes control planes first. */
const NHC_NAMES = ["control-plane", "kubernetes-control-plane", "network", "storage", "compute", "containers", "provisioning"];
const NHC_LABELS = NHC_NAMES.map((n) =>
  n === "kubernetes-control-plane"
    ? () => "node-role.kubernetes.io/control-plane"
    : (p: LabelProfile) => roleLabelKey(n.replace(/-(\w)/g, (_, c: string) => c.toUpperCase()) as Role, p),
);

const chart = (name: string) => ({ repository: "oci://example.invalid/charts", chart: name, version: "1.0.0" });

function nodeRolesValue(profile: LabelProfile) {
  return {
    taints: false,
    roles: Object.fromEntries(ROLES.map((r) => [r, { label: roleLabelKey(r, profile), taint: roleTaint(r) }])),
  };
}

function release(name: string, values: Record<string, unknown>): HelmReleaseUnit {
  return { kind: "HelmRelease", name, type: "openkeel:openkeel:Release", release: name, namespace: "openkeel", chart: chart(name), values };
}

/**
 * A release with the § 5.1 values (after the test's own change of them), as the program ships it:
 * the placement of a component § 5.2 does not list, and every anti-affinity but the Ironic
 * conductor's, are post-render patches (its chart reads neither), built by the program's rules
 * (openkeel/unlisted.ts, openkeel/zone-spread.ts).
 */
function shipped(u: HelmReleaseUnit, opts: DesignOpts): HelmReleaseUnit {
  const values = structuredClone(u.values);
  opts.values?.(u.name, values);
  const keys = [...new Set([...unlistedComponents(u.name), ...Object.keys((values.placement ?? {}) as object)])];
  const kinds = Object.fromEntries(keys.map((k) => [k, openkeelDesign(u.name, k).kind]));
  const out = unlistedPostRender(u.name, u.name, values, kinds);
  const zones = antiAffinityPostRender(u.name, out.values, kinds, values);
  const patches = [...out.patches, ...zones.patches];
  return { ...u, values: zones.values, ...(patches.length > 0 ? { postRender: patches } : {}) };
}

export interface DesignOpts {
  conductorReplicas?: number | undefined;
  ironic?: boolean | undefined;
  zun?: boolean | undefined;
  /** Replicas of the quorum StatefulSets (3 by default; 1 on a one-node lab). */
  quorum?: number | undefined;
  /** Changes an OpenKeel release's § 5.1 values before the program's patches are derived from them. */
  values?: ((release: string, values: any) => void) | undefined;
}

function designUnits(profile: LabelProfile, opts: DesignOpts = {}) {
  const q = opts.quorum ?? 3;
  const sel = (r: Role) => ({ [roleLabelKey(r, profile)]: "" });
  const tol = (r: Role) => ({ key: roleTaint(r).key, operator: "Exists", effect: "NoSchedule" });
  const reserved = { key: RESERVED_TAINT_KEY, operator: "Exists", effect: "NoSchedule" };
  // § 4.1: a disabled hypervisor carries openkeel.io/compute-disabled; NMO's drain taints its node
  // medik8s.io/drain: every node agent stays (issue 21)
  const state = [
    { key: "openkeel.io/compute-disabled", operator: "Exists", effect: "NoSchedule" },
    { key: "medik8s.io/drain", operator: "Exists", effect: "NoSchedule" },
  ];
  const global = { nodeRoles: nodeRolesValue(profile) };
  const lh = (r: Role) => `${roleTaint(r).key}:NoSchedule`;
  // § 2.3: Longhorn runs on "every node that consumes or stores volumes": not network nodes (§ 1.2).
  const volumeRoles: Role[] = ["controlPlane", "compute", "storage", "containers", "provisioning"];

  const platform: (HelmReleaseUnit | ManifestsUnit | RemoteManifestUnit)[] = [
    {
      kind: "HelmRelease",
      name: "longhorn",
      type: "openkeel:platform:Longhorn",
      release: "longhorn",
      namespace: "longhorn-system",
      chart: chart("longhorn"),
      values: {
        defaultSettings: {
          createDefaultDiskLabeledNodes: true,
          taintToleration: [...volumeRoles.map(lh), ...state.map((t) => `${t.key}:NoSchedule`)].join(";"),
        },
        longhornManager: { tolerations: [...volumeRoles.map(tol), ...state] },
        longhornDriver: { nodeSelector: sel("controlPlane"), tolerations: [tol("controlPlane")] },
        longhornUI: { nodeSelector: sel("controlPlane"), tolerations: [tol("controlPlane")] },
      },
    },
    {
      kind: "Manifests",
      name: "kubevirt-cr",
      type: "openkeel:platform:KubeVirt",
      objects: [
        {
          apiVersion: "kubevirt.io/v1",
          kind: "KubeVirt",
          metadata: { name: "kubevirt", namespace: "kubevirt" },
          spec: {
            infra: { nodePlacement: { nodeSelector: sel("controlPlane"), tolerations: [tol("controlPlane")] } },
            workloads: { nodePlacement: { nodeSelector: sel("compute"), tolerations: [tol("compute"), reserved, ...state] } },
          },
        },
        {
          apiVersion: "cdi.kubevirt.io/v1beta1",
          kind: "CDI",
          metadata: { name: "cdi" },
          spec: {
            infra: { nodeSelector: sel("controlPlane"), tolerations: [tol("controlPlane")] },
            // "storage (or compute when hyperconverged)": storage nodes may be tainted compute nodes.
            workload: { nodeSelector: sel("storage"), tolerations: [tol("storage"), tol("compute")] },
          },
        },
        // § 5.6: the control plane's own check (maxUnhealthy 1: a quorum is never fenced away), the
        // network's and the storage's; issue 14: every other node too, each in exactly one check,
        // segment hosts (openkeel.io/ha-segment) left to Masakari's.
        ...NHC_LABELS.map((label, i) => ({
          apiVersion: "remediation.medik8s.io/v1alpha1",
          kind: "NodeHealthCheck",
          metadata: { name: NHC_NAMES[i] },
          spec: {
            selector: {
              matchExpressions: [
                { key: label(profile), operator: "Exists" },
                ...NHC_LABELS.slice(0, i).map((l) => ({ key: l(profile), operator: "DoesNotExist" })),
                { key: "openkeel.io/ha-segment", operator: "DoesNotExist" },
              ],
            },
            maxUnhealthy: i < 2 ? 1 : 2,
          },
        })),
        {
          apiVersion: "self-node-remediation.medik8s.io/v1alpha1",
          kind: "SelfNodeRemediationConfig",
          metadata: { name: "self-node-remediation-config", namespace: "medik8s" },
          // § 5.6: "it tolerates everything"
          spec: { customDsTolerations: [{ operator: "Exists" }] },
        },
      ],
    },
    {
      kind: "Manifests",
      name: "multus",
      type: "openkeel:platform:Multus",
      objects: [
        {
          apiVersion: "apps/v1",
          kind: "DaemonSet",
          metadata: { name: "kube-multus-ds", namespace: "kube-system" },
          spec: {
            template: {
              spec: {
                hostNetwork: true,
                tolerations: [
                  { operator: "Exists", effect: "NoSchedule" },
                  { operator: "Exists", effect: "NoExecute" },
                ],
              },
            },
          },
        },
      ],
    },
  ];

  const openkeel: HelmReleaseUnit[] = [
    release("openkeel-chart", {
      global,
      infrastructure: {
        mariadb: { replicas: q, placement: { role: "controlPlane", antiAffinity: "required" } },
        rabbitmq: { replicas: q, placement: { role: "controlPlane", antiAffinity: "required" } },
      },
      ingress: { placement: { roles: ["controlPlane", "network"], extraTolerations: state } },
    }),
    release("openkeel-nova", {
      global,
      placement: {
        api: { role: "controlPlane" },
        conductor: { role: "controlPlane" },
        scheduler: { role: "controlPlane" },
        consoleProxy: { role: "controlPlane" },
        computeAgent: { role: "compute", extraTolerations: [reserved, ...state] },
      },
      replicas: { api: 3, conductor: 2, scheduler: 2, consoleProxy: 2 },
    }),
    release("openkeel-neutron", {
      global,
      placement: {
        api: { role: "controlPlane" },
        worker: { role: "controlPlane" },
        ovnCentral: { role: "controlPlane", antiAffinity: "required" },
        metadataAgent: { role: "compute", enabled: true, extraTolerations: [reserved, ...state] },
        bgpAgent: { roles: ["network", "compute"], enabled: false, extraTolerations: [reserved, ...state] },
      },
      // § 5.2 "What is implemented": the chassis is placed by chassis.nodeSelector alone and
      // tolerates every taint; § 5.6: the node agents of hypervisors tolerate reserved hosts
      chassis: { nodeSelector: { [chassisLabelKey(profile)]: "" } },
      replicas: { api: 3, worker: 2, ovnCentral: q },
    }),
    release("openkeel-swift", {
      global,
      placement: { proxy: { role: "controlPlane" }, storage: { role: "storage", antiAffinity: "required", extraTolerations: [tol("compute")] } },
      replicas: { proxy: 3, storage: q },
    }),
  ];
  if (opts.ironic) {
    openkeel.push(
      release("openkeel-ironic", {
        global,
        placement: { api: { role: "controlPlane" }, conductor: { role: "provisioning", antiAffinity: "required" } },
        replicas: { api: 3, conductor: opts.conductorReplicas ?? 1 },
      }),
    );
  }
  if (opts.zun) {
    openkeel.push(release("openkeel-zun", { global, placement: { computeAgent: { role: "containers", extraTolerations: [reserved, ...state] } } }));
  }
  return { platform, openkeel };
}

/**
 * A copy of the plan with the design's units added to its platform and openkeel phases, and
 * Longhorn's disk label on storage and control-plane nodes (D5: strict-local volumes live on their
 * pod's node), what a NodeLabelContributor adds to the Node patches.
 */
export function withDesignUnits(plan: Plan, opts: DesignOpts = {}, only?: "platform"): Plan {
  const copy: Plan = structuredClone(plan);
  // the environment's host contract is its components' (plan/host.ts), which the design's units replace
  delete copy.host;
  // The design's units replace whatever the environment built after the node-roles phase, so that
  // tests of the checks do not depend on the platform and OpenKeel modules.
  for (const ph of copy.phases) if (ph.name !== "node-roles" && (only === undefined || (ph.name !== "openkeel" && ph.name !== "openkeel-infra"))) ph.units = [];
  for (const u of phase(copy, "node-roles").units) {
    if (u.kind !== "Manifests") continue;
    for (const o of u.objects) {
      const node = copy.nodes.find((n) => n.name === o.metadata.name);
      if (node?.roles.includes("storage") || node?.roles.includes("controlPlane"))
        o.metadata.labels = { ...o.metadata.labels, "node.longhorn.io/create-default-disk": "true" };
    }
  }
  const { platform, openkeel } = designUnits(plan.labelProfile, opts);
  phase(copy, "platform").units.push(...platform);
  if (only === undefined) phase(copy, "openkeel").units.push(...openkeel.map((u) => shipped(u, opts)));
  return copy;
}
