// What ./rendered.ts accepts when it reads a render back: the zod schemas of index.yaml,
// placement.json and talos/machines.yaml, every schema version this code reads (RENDERED_SCHEMA_VERSION).
import { z } from "zod";
import { NODE_STATES } from "../config/lifecycle";
import { LABEL_PROFILES, ROLES } from "../config/roles";
import { HOST_CAPABILITY_KINDS } from "../plan/host";
import { LOSS_KINDS } from "../placement/failure-table";
import type { RenderedIndex } from "./rendered-model";

const unitBase = {
  name: z.string(),
  type: z.string(),
  protect: z.boolean().optional(),
  dependsOn: z.array(z.string()).optional(),
  waitsFor: z.array(z.object({ unit: z.string(), why: z.string() })).optional(),
};

const unitSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("HelmRelease"),
    ...unitBase,
    release: z.string(),
    namespace: z.string(),
    chart: z.object({ chart: z.string(), repository: z.string(), version: z.string() }),
    values: z.string(),
    postRender: z.string().optional(),
  }),
  z.object({ kind: z.literal("Manifests"), ...unitBase, objects: z.array(z.string()) }),
  z.object({
    kind: z.literal("RemoteManifest"),
    ...unitBase,
    urls: z.array(z.string()),
    version: z.string(),
    forceConflicts: z.array(z.string()).optional(),
    patchedFields: z.array(z.object({ object: z.string(), fields: z.array(z.string()) })).optional(),
  }),
]);

const roleSchema = z.enum(ROLES);

export const indexSchema: z.ZodType<RenderedIndex> = z.object({
  schemaVersion: z.number().int().nonnegative().optional(),
  deployGraph: z.enum(["dependencies", "phase-barriers"]).optional(),
  stack: z.string(),
  environment: z.string(),
  topology: z.string(),
  labelProfile: z.enum(LABEL_PROFILES),
  taintedRoles: z.array(roleSchema),
  cluster: z.object({ context: z.string().optional(), apiServer: z.string().optional(), kubeSystemUID: z.string().optional() }).optional(),
  nodes: z.array(
    z.object({
      name: z.string(),
      roles: z.array(roleSchema),
      zone: z.string().optional(),
      kubernetesControlPlane: z.boolean().optional(),
      state: z.enum(NODE_STATES).optional(),
    }),
  ),
  warnings: z.array(
    z.object({ code: z.string(), path: z.string().optional(), message: z.string(), reason: z.string().optional(), remediation: z.string().optional() }),
  ),
  nodeConfig: z.array(z.string()).optional(),
  feasibility: z.record(z.string(), z.record(z.string(), z.union([z.number(), z.string(), z.array(z.string())]))).optional(),
  allowRemoval: z.array(z.string()).optional(),
  phases: z.array(z.object({ name: z.string(), units: z.array(unitSchema) })),
});

const taintSchema = z.object({ key: z.string(), value: z.string().optional(), effect: z.enum(["NoSchedule", "PreferNoSchedule", "NoExecute"]) });

export const placementSchema = z.object({
  stack: z.string(),
  topology: z.string(),
  profile: z.string(),
  taintedRoles: z.array(roleSchema),
  nodes: z.array(
    z.object({
      name: z.string(),
      roles: z.array(roleSchema),
      zone: z.string().optional(),
      kubernetesControlPlane: z.boolean(),
      state: z.enum(NODE_STATES),
      labels: z.record(z.string(), z.string()),
      taints: z.array(taintSchema),
    }),
  ),
  components: z.array(
    z.object({
      name: z.string(),
      source: z.enum(["platform", "openkeel"]),
      unit: z.string(),
      kind: z.string(),
      replicas: z.number().optional(),
      // schema 5
      priorityClass: z.string().optional(),
      designRoles: z.union([z.array(roleSchema), z.literal("all"), z.literal("allNodes"), z.literal("kubernetesControlPlane")]),
      eligible: z.array(z.string()),
      // grouped (schema 3), or per node (before)
      reasons: z.union([z.array(z.object({ why: z.array(z.string()), nodes: z.array(z.string()) })), z.record(z.string(), z.array(z.string()))]),
      reaches: z.array(roleSchema),
      heldOff: z.record(z.string(), z.array(z.string())).optional(),
      hostNeeds: z.array(z.string()).optional(),
    }),
  ),
  // schema 4
  hosts: z.array(z.object({ nodes: z.array(z.string()), has: z.partialRecord(z.enum(HOST_CAPABILITY_KINDS), z.array(z.string())) })).optional(),
  podNeeds: z.array(z.string()).optional(),
  // schema 6
  failureDomains: z
    .object({
      zones: z.array(z.string()),
      drained: z.array(z.string()),
      required: z.array(z.enum(LOSS_KINDS)),
      rows: z.array(
        z.object({
          kind: z.enum(LOSS_KINDS),
          zone: z.string().optional(),
          nodes: z.array(z.string()),
          findings: z.array(z.object({ what: z.string(), level: z.enum(["fatal", "degraded", "holds"]), message: z.string(), fix: z.string().optional() })),
        }),
      ),
    })
    .optional(),
});

export const machinesSchema = z.object({
  kubernetesVersion: z.string().optional(),
  machines: z.record(
    z.string(),
    z.object({
      machineType: z.enum(["controlplane", "worker"]),
      roles: z.array(roleSchema),
      group: z.string(),
      patches: z.array(z.string()),
      schematic: z.string(),
      schematicId: z.string(),
      installerImage: z.string(),
      machine: z.string().optional(),
      ovs: z.array(z.object({ name: z.string(), nics: z.array(z.string()) })).optional(),
    }),
  ),
});
