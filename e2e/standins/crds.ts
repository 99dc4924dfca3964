// E2E STAND-INS (never used outside `npm run e2e`): CustomResourceDefinitions built from the offline
// JSON schemas of ../shared/schemas/crds/<group>/<kind>_<version>.json (datreeio/CRDs-catalog
// layout), so that the real API server validates every CR this repository writes against the
// upstream schema. The catalog's files are JSON Schema derived from each CRD's openAPIV3Schema with
// `additionalProperties: false` added everywhere (strict); turning them back into a structural
// schema means: drop `additionalProperties: false` (the API server prunes unknown fields and, with
// strict field validation, refuses them), keep everything else (x-kubernetes-* extensions,
// CEL validations, int-or-string). What a file does not say (plural, scope, kind casing) comes from
// the table below.
import * as fs from "node:fs";
import * as path from "node:path";

export interface CrdKind {
  group: string;
  kind: string;
  plural: string;
  scope: "Namespaced" | "Cluster";
  /** Versions to serve (default: every version the schema folder has), first = storage version. */
  versions?: string[];
}

type Json = unknown;

/** A JSON-schema node of the catalog → a structural openAPIV3Schema node. */
export function structural(node: Json): Json {
  if (Array.isArray(node)) return node.map(structural);
  if (node === null || typeof node !== "object") return node;
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(node as Record<string, Json>)) {
    if (k === "$schema" || k === "$id") continue;
    if (k === "additionalProperties" && v === false) continue;
    if (k === "default" || k === "enum" || k === "example") {
      out[k] = v; // literal values, not schemas
      continue;
    }
    if (k === "type" && Array.isArray(v)) {
      // ["string", "null"] → string + nullable
      const types = v.filter((t) => t !== "null");
      out.type = types[0];
      if (v.includes("null")) out.nullable = true;
      continue;
    }
    if (k === "properties" && v && typeof v === "object") {
      // the catalog's converter sometimes put `additionalProperties: false` inside a properties map
      // (where a field is itself named `properties`): a field schema is always an object
      out.properties = Object.fromEntries(
        Object.entries(v as Record<string, Json>)
          .filter(([, s]) => s !== null && typeof s === "object")
          .map(([p, s]) => [p, structural(s)]),
      );
      continue;
    }
    out[k] = structural(v);
  }
  // int-or-string written as anyOf [integer, string] without the marker
  const anyOf = out.anyOf as Record<string, Json>[] | undefined;
  if (Array.isArray(anyOf) && anyOf.length === 2 && anyOf.every((a) => a && typeof a === "object") && out.type === undefined) {
    const types = anyOf.map((a) => a.type).sort();
    if (types[0] === "integer" && types[1] === "string") out["x-kubernetes-int-or-string"] = true;
  }
  return out;
}

const VERSION_RANK = (v: string): number => {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
  if (!m) return -1;
  const major = Number(m[1]);
  const stage = m[2] === undefined ? 3 : m[2] === "beta" ? 2 : 1;
  return major * 10000 + stage * 1000 + Number(m[3] ?? 0);
};

function schemaVersions(schemasDir: string, k: CrdKind): string[] {
  const dir = path.join(schemasDir, "crds", k.group);
  const lower = k.kind.toLowerCase();
  const found = fs
    .readdirSync(dir)
    .filter((f) => f.startsWith(`${lower}_`) && f.endsWith(".json"))
    .map((f) => f.slice(lower.length + 1, -".json".length));
  if (found.length === 0) throw new Error(`no schema for ${k.group}/${k.kind} in ${dir}`);
  return found.sort((a, b) => VERSION_RANK(b) - VERSION_RANK(a));
}

/** The CRD of one kind, every listed version served, the first stored. */
export function crdFor(schemasDir: string, k: CrdKind, standIn: string): Record<string, unknown> {
  const versions = k.versions ?? schemaVersions(schemasDir, k);
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      name: `${k.plural}.${k.group}`,
      labels: { "e2e.openkeel.io/stand-in": "true" },
      annotations: {
        "e2e.openkeel.io/stand-in": `${standIn}: CRD built from ../shared/schemas/crds/${k.group} (e2e only)`,
        // *.k8s.io and *.kubernetes.io groups are protected: the upstream CRDs carry their approval
        ...(/(^|\.)(k8s|kubernetes)\.io$/.test(k.group)
          ? { "api-approved.kubernetes.io": "https://github.com/kubernetes-csi/external-snapshotter/pull/419" }
          : {}),
      },
    },
    spec: {
      group: k.group,
      scope: k.scope,
      names: { kind: k.kind, listKind: `${k.kind}List`, plural: k.plural, singular: k.kind.toLowerCase() },
      versions: versions.map((v, i) => {
        const file = path.join(schemasDir, "crds", k.group, `${k.kind.toLowerCase()}_${v}.json`);
        const schema = structural(JSON.parse(fs.readFileSync(file, "utf8"))) as Record<string, unknown>;
        // metadata is the API server's: a CRD schema may only restrict name/generateName
        const props = { ...((schema.properties as Record<string, unknown>) ?? {}) };
        props.metadata = { type: "object" };
        return {
          name: v,
          served: true,
          storage: i === 0,
          subresources: props.status ? { status: {} } : {},
          schema: { openAPIV3Schema: { ...schema, type: "object", properties: props } },
        };
      }),
    },
  };
}

const ns = (group: string, kinds: [kind: string, plural: string][], scope: CrdKind["scope"] = "Namespaced"): CrdKind[] =>
  kinds.map(([kind, plural]) => ({ group, kind, plural, scope }));

/** Every kind a stand-in carries, by upstream artifact. */
export const KINDS = {
  certManager: [
    ...ns("cert-manager.io", [
      ["Certificate", "certificates"],
      ["CertificateRequest", "certificaterequests"],
      ["Issuer", "issuers"],
    ]),
    ...ns("cert-manager.io", [["ClusterIssuer", "clusterissuers"]], "Cluster"),
    ...ns("acme.cert-manager.io", [
      ["Challenge", "challenges"],
      ["Order", "orders"],
    ]),
  ],
  mariadb: ns("k8s.mariadb.com", [
    ["Backup", "backups"],
    ["Connection", "connections"],
    ["Database", "databases"],
    ["ExternalMariaDB", "externalmariadbs"],
    ["Grant", "grants"],
    ["MariaDB", "mariadbs"],
    ["MaxScale", "maxscales"],
    ["PhysicalBackup", "physicalbackups"],
    ["Restore", "restores"],
    ["SqlJob", "sqljobs"],
    ["User", "users"],
  ]),
  // Longhorn 1.12 serves v1beta2 only (v1beta1 was removed in 1.10)
  longhorn: ns("longhorn.io", [
    ["BackingImage", "backingimages"],
    ["BackingImageDataSource", "backingimagedatasources"],
    ["BackingImageManager", "backingimagemanagers"],
    ["BackupBackingImage", "backupbackingimages"],
    ["BackupTarget", "backuptargets"],
    ["BackupVolume", "backupvolumes"],
    ["Engine", "engines"],
    ["EngineImage", "engineimages"],
    ["InstanceManager", "instancemanagers"],
    ["Node", "nodes"],
    ["Orphan", "orphans"],
    ["RecurringJob", "recurringjobs"],
    ["Replica", "replicas"],
    ["Setting", "settings"],
    ["ShareManager", "sharemanagers"],
    ["Snapshot", "snapshots"],
    ["SupportBundle", "supportbundles"],
    ["SystemBackup", "systembackups"],
    ["SystemRestore", "systemrestores"],
    ["Volume", "volumes"],
    ["VolumeAttachment", "volumeattachments"],
  ] as [string, string][]).map((k) => ({ ...k, versions: ["v1beta2"] })),
  kubevirt: [{ group: "kubevirt.io", kind: "KubeVirt", plural: "kubevirts", scope: "Namespaced" }] as CrdKind[],
  cdi: [{ group: "cdi.kubevirt.io", kind: "CDI", plural: "cdis", scope: "Cluster" }] as CrdKind[],
  rabbitmq: [{ group: "rabbitmq.com", kind: "RabbitmqCluster", plural: "rabbitmqclusters", scope: "Namespaced" }] as CrdKind[],
  // the messaging topology operator's kinds (vhosts, users, permissions… of a RabbitmqCluster)
  rabbitmqTopology: ns("rabbitmq.com", [
    ["Binding", "bindings"],
    ["Exchange", "exchanges"],
    ["Federation", "federations"],
    ["OperatorPolicy", "operatorpolicies"],
    ["Permission", "permissions"],
    ["Policy", "policies"],
    ["Queue", "queues"],
    ["SchemaReplication", "schemareplications"],
    ["Shovel", "shovels"],
    ["TopicPermission", "topicpermissions"],
    ["User", "users"],
    ["Vhost", "vhosts"],
  ]),
  // external-snapshotter v8: snapshot.storage.k8s.io serves v1 only
  snapshot: {
    "snapshot.storage.k8s.io_volumesnapshotclasses.yaml": {
      group: "snapshot.storage.k8s.io",
      kind: "VolumeSnapshotClass",
      plural: "volumesnapshotclasses",
      scope: "Cluster",
      versions: ["v1"],
    },
    "snapshot.storage.k8s.io_volumesnapshotcontents.yaml": {
      group: "snapshot.storage.k8s.io",
      kind: "VolumeSnapshotContent",
      plural: "volumesnapshotcontents",
      scope: "Cluster",
      versions: ["v1"],
    },
    "snapshot.storage.k8s.io_volumesnapshots.yaml": {
      group: "snapshot.storage.k8s.io",
      kind: "VolumeSnapshot",
      plural: "volumesnapshots",
      scope: "Namespaced",
      versions: ["v1"],
    },
    "groupsnapshot.storage.k8s.io_volumegroupsnapshotclasses.yaml": {
      group: "groupsnapshot.storage.k8s.io",
      kind: "VolumeGroupSnapshotClass",
      plural: "volumegroupsnapshotclasses",
      scope: "Cluster",
    },
    "groupsnapshot.storage.k8s.io_volumegroupsnapshotcontents.yaml": {
      group: "groupsnapshot.storage.k8s.io",
      kind: "VolumeGroupSnapshotContent",
      plural: "volumegroupsnapshotcontents",
      scope: "Cluster",
    },
    "groupsnapshot.storage.k8s.io_volumegroupsnapshots.yaml": {
      group: "groupsnapshot.storage.k8s.io",
      kind: "VolumeGroupSnapshot",
      plural: "volumegroupsnapshots",
      scope: "Namespaced",
    },
  } as Record<string, CrdKind>,
  olm: ns("operators.coreos.com", [
    ["CatalogSource", "catalogsources"],
    ["ClusterServiceVersion", "clusterserviceversions"],
    ["InstallPlan", "installplans"],
    ["OperatorGroup", "operatorgroups"],
    ["Subscription", "subscriptions"],
  ]),
  /** Created by the stand-in controller when OLM would install the operator (Subscription → CSV). */
  medik8s: {
    "node-healthcheck-operator": [{ group: "remediation.medik8s.io", kind: "NodeHealthCheck", plural: "nodehealthchecks", scope: "Cluster" }],
    "self-node-remediation": ns("self-node-remediation.medik8s.io", [
      ["SelfNodeRemediation", "selfnoderemediations"],
      ["SelfNodeRemediationConfig", "selfnoderemediationconfigs"],
      ["SelfNodeRemediationTemplate", "selfnoderemediationtemplates"],
    ]),
    "node-maintenance-operator": [{ group: "nodemaintenance.medik8s.io", kind: "NodeMaintenance", plural: "nodemaintenances", scope: "Cluster" }],
  } as Record<string, CrdKind[]>,
};
