// Which field changes cannot be applied to an object in place. Two sources, kept apart because they
// end differently:
// - what the Pulumi Kubernetes provider replaces (deletes and creates again) when the field changes:
//   pulumi/pulumi-kubernetes provider/pkg/provider/diff.go (`forceNew`, v4), with the provider's
//   defaults: ConfigMap data and Secret data are immutable unless `enableConfigMapMutable` /
//   `enableSecretMutable` is set, which this repository's program does not do. metadata.name and
//   .namespace force a replacement of every kind, but the preview matches objects by them, so such
//   a change is a delete and a create there;
// - what the Kubernetes API refuses to update and the provider does not replace, so `pulumi up`
//   fails on it: StorageClass `reclaimPolicy` and `volumeBindingMode`
//   (kubernetes/kubernetes pkg/apis/storage/validation/validation.go, ValidateStorageClassUpdate,
//   which also forbids `parameters` and `provisioner`: those the provider replaces). StatefulSet
//   fields beyond replicas, ordinals, template, updateStrategy, revisionHistoryLimit,
//   persistentVolumeClaimRetentionPolicy and minReadySeconds are forbidden by the API
//   (apps/validation ValidateStatefulSetUpdate) and all of them are in the provider's list, as is
//   the selector of a Deployment or DaemonSet and a Job's template;
// - what this program replaces itself, deleting the object first: a PriorityClass's `value` and
//   `preemptionPolicy`, which the API refuses to update and the provider would update in place
//   (`replaceOnChanges` with `deleteBeforeReplace`, components/plan-unit.ts; platform/priority-classes.ts).
// Patches (Node role labels, objects an operator owns) never replace anything: they only amend.
import { isDeepStrictEqual } from "node:util";
import { formatPath, type PathSegment } from "../config/problems";
import { WHOLE_DOCUMENT, type Change } from "../render/diff";
import { PRIORITY_CLASS_IMMUTABLE } from "../platform/priority-classes";

/** `<apiVersion>/<kind>` → field paths; `*` stands for any list item. */
type Rules = Record<string, readonly string[]>;

const SELECTOR = "spec.selector";
const CONTAINER_FIELDS = [
  "args",
  "command",
  "env",
  "image",
  "imagePullPolicy",
  "lifecycle",
  "livenessProbe",
  "ports",
  "readinessProbe",
  "resources",
  "securityContext",
  "stdin",
  "stdinOnce",
  "terminationMessagePath",
  "terminationMessagePolicy",
  "tty",
  "volumeDevices",
  "volumeMounts",
  "workingDir",
];
const POD_SPEC_FIELDS = [
  "affinity",
  "automountServiceAccountToken",
  "dnsConfig",
  "dnsPolicy",
  "enableServiceLinks",
  "hostAliases",
  "hostIPC",
  "hostNetwork",
  "hostPID",
  "hostname",
  "imagePullSecrets",
  "nodeName",
  "nodeSelector",
  "overhead",
  "preemptionPolicy",
  "priority",
  "priorityClassName",
  "readinessGates",
  "restartPolicy",
  "runtimeClassName",
  "schedulerName",
  "securityContext",
  "serviceAccount",
  "serviceAccountName",
  "shareProcessNamespace",
  "subdomain",
  "terminationGracePeriodSeconds",
  "volumes",
];
const STATEFUL_SET = ["spec.podManagementPolicy", "spec.revisionHistoryLimit", SELECTOR, "spec.serviceName", "spec.volumeClaimTemplates"];
const JOB = ["spec.completions", "spec.parallelism", SELECTOR, "spec.template"];
const ROLE_BINDING = ["roleRef"];

const PULUMI_REPLACES: Rules = {
  "apps/v1/Deployment": [SELECTOR],
  "apps/v1/DaemonSet": [SELECTOR],
  "apps/v1/StatefulSet": STATEFUL_SET,
  "batch/v1/Job": JOB,
  "v1/ConfigMap": ["binaryData", "data"],
  "v1/Secret": ["type", "stringData", "data"],
  "v1/Service": ["spec.clusterIP"],
  "v1/PersistentVolumeClaim": ["spec.accessModes", SELECTOR, "spec.storageClassName", "spec.volumeName"],
  "v1/Pod": [
    ...POD_SPEC_FIELDS.map((f) => `spec.${f}`),
    ...["containers", "initContainers"].flatMap((list) => CONTAINER_FIELDS.map((f) => `spec.${list}.*.${f}`)),
  ],
  "v1/ResourceQuota": ["spec.scopes"],
  "policy/v1beta1/PodDisruptionBudget": ["spec"],
  "rbac.authorization.k8s.io/v1/RoleBinding": ROLE_BINDING,
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": ROLE_BINDING,
  "storage.k8s.io/v1/StorageClass": ["parameters", "provisioner"],
};

const API_REFUSES: Rules = {
  "storage.k8s.io/v1/StorageClass": ["reclaimPolicy", "volumeBindingMode"],
};

const PROGRAM_REPLACES_DELETING_FIRST: Rules = {
  "scheduling.k8s.io/v1/PriorityClass": PRIORITY_CLASS_IMMUTABLE,
};

function valueAt(v: unknown, path: readonly PathSegment[]): unknown {
  let cur = v;
  for (const seg of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    if (typeof seg === "object") cur = (cur as { name?: unknown }[]).find?.((i) => i?.name === seg.name);
    else cur = (cur as Record<string | number, unknown>)[seg];
  }
  return cur;
}

/**
 * Whether a change touches the field at `rule`: the change is at or below it, or above it (a whole
 * map added or removed) with a different value at the field.
 */
function touches(change: Change, rule: readonly string[]): boolean {
  const p = change.path;
  const n = Math.min(p.length, rule.length);
  for (let i = 0; i < n; i++) {
    if (rule[i] === "*") {
      if (typeof p[i] === "string") return false;
      continue;
    }
    if (p[i] !== rule[i]) return false;
  }
  if (p.length >= rule.length) return true;
  // the change is above the field: compare what lies at the field on either side
  const rest = rule.slice(p.length);
  if (rest.includes("*")) return true;
  return !isDeepStrictEqual(valueAt(change.before, rest), valueAt(change.after, rest));
}

function fieldsIn(rules: Rules, apiVersion: string, kind: string, changes: Change[]): string[] {
  const list = rules[`${apiVersion}/${kind}`];
  if (!list) return [];
  const out = new Set<string>();
  for (const c of changes) {
    for (const r of list) if (touches(c, r.split("."))) out.add(formatPath(c.path, WHOLE_DOCUMENT));
  }
  return [...out];
}

export interface InPlace {
  /** Changed fields the object is replaced for (formatted paths): `pulumi up` deletes it and creates it again. */
  replaces: string[];
  /** Changed fields the API server refuses to update and the provider does not replace: `pulumi up` fails. */
  refused: string[];
  /** The replacement deletes the object before it creates the new one (the same name: nothing of that name exists in between). */
  deleteFirst: boolean;
}

/** What the changes of an object mean for `pulumi up`; `patch`: applied as a patch (never replaced). */
export function inPlace(apiVersion: string, kind: string, changes: Change[], patch: boolean): InPlace {
  if (patch) return { replaces: [], refused: [], deleteFirst: false };
  const deleting = fieldsIn(PROGRAM_REPLACES_DELETING_FIRST, apiVersion, kind, changes);
  const replaces = [...new Set([...fieldsIn(PULUMI_REPLACES, apiVersion, kind, changes), ...deleting])];
  return { replaces, refused: fieldsIn(API_REFUSES, apiVersion, kind, changes), deleteFirst: deleting.length > 0 };
}
