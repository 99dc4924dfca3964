// What every builder of a stack's Plan reads, the platform components' and the OpenKeel releases'
// alike: one context over the config, built once per Plan (environments/compose.ts): the stack
// config, the inventory as the scheduler sees it (with its environment's traits), the storage its
// environment offers, and which services run. Plus the few shapes the platform components share
// (namespaces with pod-security labels, control-plane placement, waiting for an object to be ready,
// pinned upstream manifests).
import type { LoadedConfig } from "../config/schema";
import { resolvePlacement, type Scheduling } from "../placement/chart-helper";
import { createHash } from "node:crypto";
import {
  APPLY_AS_PATCH_ANNOTATION,
  remoteManifestUnit,
  type K8sObject,
  type RemoteManifestOptions,
  type RemoteManifestUnit,
  type UnitContent,
  type UnitOptions,
} from "../plan/plan";
import { roleToleration, type LabelProfile, type Role, type Toleration } from "../config/roles";
import { serviceEnabled } from "../topology/services";
import { roleLabelsInUse, type Topology } from "../topology/topology";
import type { PlatformConfig } from "../config/platform";
import type { ManifestPin } from "./versions";
import type { PodTemplate } from "../placement/workloads";
import type { Check } from "../config/problems";
import type { Change } from "../render/diff";
import { kindKey } from "../plan/needs";

/** A StorageClass the cluster has without this repository creating it. */
export interface ProvidedStorageClass {
  name: string;
  provisioner: string;
  /** Where the fact comes from (repo@tag path). */
  source: string;
  /**
   * It is the cluster's default class: no other class is made the default.
   * @default not the default class
   */
  isDefault?: true;
}

/** The storage a stack's environment offers the releases (D5). */
export interface StackStorage {
  /** The class of the volumes that replicate their own data: one replica on the pod's node (D5). */
  strictLocalClass: string;
  /** Classes the environment provides itself (kind's `standard`). */
  provided: ProvidedStorageClass[];
  /** D5 is held: that class must be a one-replica strict-local Longhorn class (a lab may use kind's local-path class). */
  strictLocalEnforced: boolean;
  /**
   * The class of RWX filesystem volumes (Manila's shares), whose share managers run on storage nodes.
   * @default none: the environment offers no RWX class (the lab without Longhorn)
   */
  sharedClass?: string;
  /**
   * The class of the volumes on the storage nodes' HDD capacity disks (§ 6.3), strict-local like D5's.
   * @default none: no capacity tier; what would use it takes the strict-local class
   */
  capacityClass?: string;
}

/** The remediation template a NodeHealthCheck names (remediation.medik8s.io/v1alpha1 `spec.remediationTemplate`). */
export interface RemediationTemplateRef {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

/**
 * How the hosts of a Masakari failover segment are remediated (§ 5.6): Masakari creates one
 * NodeHealthCheck per segment, and these are what it is told to put in them, so that a segment
 * host is fenced like the nodes of this repository's own checks.
 */
export interface SegmentRemediation {
  remediationTemplate: RemediationTemplateRef;
  maxUnhealthy: number | string;
  unhealthyConditions: { type: "Ready"; status: "False" | "Unknown"; duration: string }[];
}

/** The pods an operator builds from an object of its kind, as its code at the pin builds them. */
export interface OperatorPods {
  /** Who builds them, as a finding names it (`the … operator`). */
  builder: string;
  /** The labels it gives every pod of the object of that name, whatever the object says: what selects them all. */
  labels(name: string): Record<string, string>;
  /** The pods it builds from the object: their labels and pod spec. */
  of(cr: K8sObject): PodTemplate;
  /**
   * How many of them the PodDisruptionBudget it writes itself lets a drain evict while all are healthy.
   * @default none: it writes no budget; the Plan writes one where the design wants one
   */
  disruptionsAllowed?(cr: K8sObject): number;
}

/** A change of one object the webhook of its kind may hold. */
export interface HeldChange {
  name: string;
  /** `deleted`, or the held fields that change. */
  change: "deleted" | string[];
}

/**
 * What an operator's controllers and admission webhooks do with an object of one of its custom
 * kinds, which the machinery judges before they act on it: the charts' objects before the cluster
 * has them (openkeel/guarantees.ts, openkeel/workloads.ts), a change before it is deployed
 * (review/operator-findings.ts).
 */
export interface CustomKind {
  /**
   * The pods its operator builds from the object.
   * @default none: it builds no pods
   */
  pods?: OperatorPods;
  /**
   * Fields (`spec.…`) its webhook refuses to update once the object exists, and why: only a new object takes them.
   * @default none
   */
  immutable?: { fields: readonly string[]; reason: string };
  /**
   * Changes its webhook refuses while the object is in a state the review cannot see (a check that remediates).
   * @default none
   */
  held?: {
    /** The held fields that changes of the whole object touch (render/diff.ts's), as the webhook names them. */
    fields(changes: readonly Pick<Change, "path">[]): string[];
    /** The finding of the changes of the stack's objects of the kind that the webhook may hold (one for all of them). */
    finding(changes: readonly HeldChange[]): Check[];
  };
}

/** By `<group>/<Kind>` (plan/needs.ts KindOffers' keys): a kind is one component's. */
export type CustomKinds = Readonly<Partial<Record<string, CustomKind>>>;

/** A kind's name alone, from its key `<group>/<Kind>`. */
const kindName = (key: string) => key.slice(key.indexOf("/") + 1);

/** What the kind of an object is, by its apiVersion and kind. */
export function customKind(kinds: CustomKinds, o: { apiVersion: string; kind: string }): CustomKind | undefined {
  return kinds[kindKey(o)];
}

/** What a kind named alone is (a post-render patch's target names no group): its name is one kind's (customKindsOf). */
export function customKindNamed(kinds: CustomKinds, kind: string): CustomKind | undefined {
  return Object.entries(kinds).find(([k]) => kindName(k) === kind)?.[1];
}

/**
 * The custom kinds of the components of a list. A kind is one component's, its name too (the
 * placement readers and a post-render patch's target name a kind alone): a second claim is a bug.
 */
export function customKindsOf(components: readonly KindOwner[]): CustomKinds {
  const out: Record<string, CustomKind> = {};
  for (const c of components)
    for (const [key, kind] of Object.entries(c.customKinds ?? {})) {
      if (Object.keys(out).some((k) => kindName(k) === kindName(key)))
        throw new Error(`${c.name} claims the kind ${key}, whose name another component's kind already has`);
      if (kind) out[key] = kind;
    }
  return out;
}

/** A component whose operators and webhooks act on objects of its custom kinds says what they do. */
export interface KindOwner {
  name: string;
  /**
   * What they do with an object of each of its kinds, by `<group>/<Kind>`.
   * @default none: it owns no kind the machinery judges
   */
  customKinds?: CustomKinds;
}

/** A platform component that remediates nodes says how a segment host is to be remediated. */
export interface NodeRemediator {
  /**
   * What Masakari's per-segment NodeHealthChecks are told (its remediation template, maxUnhealthy, conditions).
   * @default none: the component remediates no node
   */
  segmentRemediation?(ctx: StackContext): SegmentRemediation;
}

/** A platform component that gives a Service of type LoadBalancer its address. */
export interface LoadBalancerProvider {
  /**
   * Whether it gives one an address in this stack (MetalLB where the stack gives it a pool).
   * @default never
   */
  loadBalancer?(ctx: StackContext): boolean;
}

export interface StackContext {
  cfg: LoadedConfig;
  topo: Topology;
  platform: PlatformConfig;
  profile: LabelProfile;
  storage: StackStorage;
  /** global.nodeRoles is passed, so role placements select labelled nodes. */
  rolesPassed: boolean;
  /** Whether the stack runs an OpenKeel service (topology/services.ts); a name no service has is a bug of the caller. */
  serviceOn(service: string): boolean;
  /**
   * What every node agent (a DaemonSet) tolerates beside its placement: the taints a node's state
   * brings (config/lifecycle.ts NODE_STATE_TAINTS and every platform component's agentTaints), so
   * that a rollout brings it back to a disabled or draining node.
   */
  agentTolerations: readonly Toleration[];
  /**
   * How Masakari's segment hosts are remediated, when the stack installs a node remediator (Medik8s).
   * @default none: nothing remediates nodes (the lab), and Masakari is told nothing about it
   */
  remediation?: SegmentRemediation;
  /** What the installed components' operators and webhooks do with objects of their custom kinds (`customKinds` of each). */
  kinds: CustomKinds;
  /**
   * A Service of type LoadBalancer gets an address: an installed component gives it one.
   * @default none: such a Service would never get an address, and OpenKeel writes none
   */
  loadBalancer?: true;
}

/**
 * The context of a stack; `installed` are the platform components it installs (the remediator and
 * the load balancer among them), `agentTolerations` what its node agents tolerate of the taints a
 * node's state brings.
 */
export function stackContext(
  cfg: LoadedConfig,
  topo: Topology,
  storage: StackStorage,
  installed: readonly (NodeRemediator & KindOwner & LoadBalancerProvider)[],
  agentTolerations: readonly Toleration[],
): StackContext {
  const ctx: StackContext = {
    cfg,
    topo,
    platform: cfg.platform,
    profile: topo.profile,
    storage,
    rolesPassed: roleLabelsInUse(topo),
    serviceOn: (service) => serviceEnabled(cfg, topo, service),
    kinds: customKindsOf(installed),
    agentTolerations,
  };
  const remediation = installed.find((c) => c.segmentRemediation)?.segmentRemediation?.(ctx);
  const loadBalancer = installed.some((c) => c.loadBalancer?.(ctx));
  return { ...ctx, ...(remediation ? { remediation } : {}), ...(loadBalancer ? { loadBalancer: true as const } : {}) };
}

export function rolesTolerations(roles: readonly Role[]): Toleration[] {
  return roles.map(roleToleration);
}

/**
 * Operators' controllers, UIs and infra Deployments: the control plane (§ 2.3). A lab whose nodes
 * carry no role (§ 5.2: roles are optional there) gets the toleration only, or nothing could run.
 */
export function controlPlaneScheduling(ctx: Pick<StackContext, "profile"> & { topo?: Pick<Topology, "nodes"> }): Scheduling {
  const s = resolvePlacement({ role: "controlPlane" }, { profile: ctx.profile });
  if (ctx.topo && !ctx.topo.nodes.some((n) => n.roles.length > 0)) delete s.nodeSelector;
  return s;
}

/** nodeSelector + tolerations of a scheduling, as Helm values and most CRDs spell them. */
export function selectorAndTolerations(s: Scheduling): { nodeSelector: Record<string, string>; tolerations: Toleration[] } {
  return { nodeSelector: { ...(s.nodeSelector ?? {}) }, tolerations: s.tolerations };
}

export type PodSecurityLevel = "privileged" | "baseline" | "restricted";

/**
 * A namespace with the pod-security level its pods need. Audit and warn follow enforce: Talos
 * enforces baseline by default and warns at restricted, which would flag every privileged
 * DaemonSet on each rollout.
 */
export function namespace(name: string, level: PodSecurityLevel): K8sObject {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name,
      labels: {
        "pod-security.kubernetes.io/enforce": level,
        "pod-security.kubernetes.io/audit": level,
        "pod-security.kubernetes.io/warn": level,
      },
    },
  };
}

/**
 * `pulumi.com/waitFor` (kubectl-wait syntax): Pulumi reports the object created only once the
 * condition holds, so everything that depends on its unit waits for it too.
 */
export function waitFor(condition: string, timeoutSeconds: number): Record<string, string> {
  return { "pulumi.com/waitFor": condition, "pulumi.com/timeoutSeconds": String(timeoutSeconds) };
}

/** The annotation of a patch that waits (patchThatWaitsFor): a digest of what the patch says. */
export const PATCH_CONTENT_ANNOTATION = "openkeel.io/patch-content";

/** JSON with every object's keys sorted: the same content, the same text. */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .filter((k) => o[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v);
}

/**
 * A patch of an object another controller creates (APPLY_AS_PATCH_ANNOTATION) that waits for
 * `condition`, and for the object it judges to carry this patch, as it is now. The provider's await
 * keeps the last object its informer delivered and drops an older one only by metadata.generation
 * (pulumi-kubernetes provider/v4 pkg/await/condition/observer.go, ObjectObserver.Observe), which a
 * metadata-only patch does not bump: the informer's copy from before the patch could satisfy the
 * condition and become the state's outputs, and the next preview proposed the patch again (the
 * e2e's idempotent preview of prod-medium, the NHC CSV's patch, under CI's load). The field manager
 * tells a patched object from an unpatched one only once: after a later change of the same patch,
 * the copy from before it carries our field manager too (issue 45 item 6). So the patch carries a
 * digest of its own content (the object, the condition, the timeout: PATCH_CONTENT_ANNOTATION) and
 * waits for that digest: a copy from before any other version of the patch has another, or none.
 * The conditions of a JSON list must hold together on one object (pkg/metadata/overrides.go
 * ReadyCondition).
 */
export function patchThatWaitsFor(object: K8sObject, condition: string, timeoutSeconds: number): K8sObject {
  const digest = createHash("sha256").update(canonicalJson({ object, condition, timeoutSeconds })).digest("hex").slice(0, 16);
  const patched = `jsonpath={.metadata.annotations['${PATCH_CONTENT_ANNOTATION}']}=${digest}`;
  return {
    ...object,
    metadata: {
      ...object.metadata,
      annotations: {
        ...object.metadata.annotations,
        [APPLY_AS_PATCH_ANNOTATION]: "patch",
        [PATCH_CONTENT_ANNOTATION]: digest,
        ...waitFor(JSON.stringify([condition, patched]), timeoutSeconds),
      },
    },
  };
}

/**
 * What a pinned chart or manifest holds, by version (plan/needs.ts facts: the uses in full, the
 * offers other units use): stated beside its unit, for the pin and for the predecessor a pin bump
 * comes from (the e2e deploys it first), and held to the mirror's files of each version by
 * test/integration/plan/unit-content.test.ts, which prints what a new version holds.
 */
export type Contents = Readonly<Record<string, UnitContent>>;

/**
 * The content of an artifact at a version. A version not stated (a pin bump whose module was not
 * told what the new file holds) takes the newest stated one's, as an assumption for what other units
 * find there, and says so: its unit then waits for every unit before it, and
 * test/integration/plan/unit-content.test.ts fails with what the mirror's file holds.
 */
export function contentAt(contents: Contents, version: string, what: string): Pick<UnitOptions, "content" | "contentUnknown"> {
  const c = contents[version];
  if (c) return { content: c };
  const newest = Object.keys(contents).sort(compareVersions).at(-1);
  const unknown = `what ${what} ${version} holds is not stated (its module states ${Object.keys(contents).join(", ")}; test/integration/plan/unit-content.test.ts prints it)`;
  return { ...(newest ? { content: contents[newest] } : {}), contentUnknown: unknown };
}

/** `v1.9.0` against `v1.10.0`, by their numbers. */
function compareVersions(a: string, b: string): number {
  const parts = (v: string) => (/\d+(\.\d+)*/.exec(v)?.[0] ?? "0").split(".").map(Number);
  const [pa, pb] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}

/**
 * Pinned upstream manifests of one release, applied together, with what they hold by version.
 * Those that hold CRDs are protected: deleting a CRD deletes every object of its kind.
 */
export function pinnedManifestUnit(
  name: string,
  type: string,
  pins: ManifestPin | ManifestPin[],
  contents: Contents,
  opts: Omit<RemoteManifestOptions, "content" | "contentUnknown"> = {},
): RemoteManifestUnit {
  const list = Array.isArray(pins) ? pins : [pins];
  const versions = new Set(list.map((p) => p.version));
  if (versions.size !== 1) throw new Error(`unit ${name}: manifests of one unit come from one release, not ${[...versions].join(", ")}`);
  return remoteManifestUnit(
    name,
    type,
    list.map((p) => p.url),
    list[0].version,
    { ...opts, ...contentAt(contents, list[0].version, name) },
  );
}
