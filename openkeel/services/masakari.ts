// Masakari: instance high availability (§ 5.6). Its API and engine on the control plane, each also
// placed by a nodeSelector of its own that wins over the role (§ 5.2 `nodePlacement.<x>`). Masakari
// creates one NodeHealthCheck per failover segment, selecting the segment's hosts
// (openkeel.io/ha-segment=<uuid>, always compute nodes). § 5.2 lists no key for what those checks
// remediate with: `segmentHealthChecks` is our contract for the openkeel-masakari chart
// (docs/openkeel-values.md), written where the stack installs a node remediator (Medik8s:
// platform/medik8s.ts says what it is). This module holds its schema and the placement checks that
// hold it to this repository's own NodeHealthChecks.
import { z } from "zod";
import { GO_DURATION, maxUnhealthySchema } from "../../config/platform";
import type { Check } from "../../config/problems";
import { HA_SEGMENT_LABEL } from "../../config/roles";
import { nodeSelectorSchema, tolerationSchema } from "../../config/k8s";
import { findUnit, type Plan } from "../../plan/plan";
import { fact } from "../../plan/needs";
import type { PlacementCheck, ReportNode } from "../../placement/report";
import { matchesLabelSelector } from "../../placement/scheduling";
import { isObj, obj } from "../../placement/workloads";
import type { SegmentRemediation } from "../../platform/context";
import { NHC_KIND } from "../../platform/medik8s-placement";
import { api, worker, type HelperPlaced } from "../components";
import { releaseName } from "../names";
import { openkeelService } from "../service";

/** The values key of the chart: what Masakari puts in every segment's NodeHealthCheck. */
const SEGMENT_HEALTH_CHECKS = "segmentHealthChecks";
const MASAKARI = "masakari";
const MASAKARI_RELEASE = releaseName(MASAKARI);

const segmentHealthChecksSchema = z.strictObject({
  remediationTemplate: z.strictObject({ apiVersion: z.string().min(1), kind: z.string().min(1), namespace: z.string().min(1), name: z.string().min(1) }),
  maxUnhealthy: maxUnhealthySchema,
  unhealthyConditions: z
    .array(
      z.strictObject({
        type: z.literal("Ready"),
        status: z.enum(["False", "Unknown"]),
        duration: z.string().regex(GO_DURATION, { message: "is not a duration. Fix: write a Go duration such as 300s or 5m" }),
      }),
    )
    .min(1),
});

/** The release's values: what the stack's remediator says a segment host is remediated with. */
function masakariValues(remediation: SegmentRemediation | undefined): Record<string, unknown> {
  return remediation ? { [SEGMENT_HEALTH_CHECKS]: remediation } : {};
}

/** What the Masakari release tells its segments' checks, as rendered (a stack's raw values included). */
function segmentHealthChecks(plan: Plan): SegmentRemediation | undefined {
  const u = findUnit(plan, MASAKARI_RELEASE);
  if (u?.kind !== "HelmRelease") return undefined;
  const v = u.values[SEGMENT_HEALTH_CHECKS];
  return isObj(v) ? (v as unknown as SegmentRemediation) : undefined;
}

/** Hosts a segment may take: the compute nodes (§ 1.1, § 5.6), as they would be labelled once in a segment. */
function segmentHosts(nodes: readonly ReportNode[]): ReportNode[] {
  return nodes.filter((n) => n.roles.includes("compute")).map((n) => ({ ...n, labels: { ...n.labels, [HA_SEGMENT_LABEL]: "segment" } }));
}

const holdsQuorum = (n: ReportNode) => n.roles.includes("controlPlane") || n.kubernetesControlPlane;

/**
 * A segment host is the segment's check's alone: none of this repository's NodeHealthChecks may
 * select a compute node once Masakari labels it, or two checks would remediate it at once, the
 * control plane's maxUnhealthy of 1 no longer holding for a hyperconverged quorum node. Only the
 * selectors platform/medik8s.ts writes decide it: no stack can trip it.
 */
const segmentOverlap: PlacementCheck = {
  origin: "code",
  check: ({ plan, nodes, placements }) => {
    if (!segmentHealthChecks(plan)) return [];
    const ours = placements.filter((p) => p.component.kind === NHC_KIND);
    return segmentHosts(nodes).flatMap((n): Check[] => {
      const by = ours.filter((p) => matchesLabelSelector(p.component.nodeSelection, n.labels)).map((p) => p.component.name);
      if (by.length === 0) return [];
      return [
        {
          level: "error",
          code: "placement-masakari-segment-overlap",
          message: `node ${n.name}, once a Masakari segment host, would still be selected by ${by.join(", ")}: its segment's NodeHealthCheck and ours would remediate it concurrently (§ 5.6)`,
          fix: `exclude ${HA_SEGMENT_LABEL} (DoesNotExist) from the selector of every NodeHealthCheck of platform/medik8s.ts`,
        },
      ];
    });
  },
};

/** The template this repository's own NodeHealthChecks remediate with (they all name one). */
function ourTemplate(plan: Plan): unknown {
  for (const ph of plan.phases)
    for (const u of ph.units) if (u.kind === "Manifests") for (const o of u.objects) if (o.kind === NHC_KIND) return obj(o.spec).remediationTemplate;
  return undefined;
}

const TEMPLATE_FIELDS = ["apiVersion", "kind", "namespace", "name"] as const;
const sameTemplate = (a: unknown, b: unknown) => TEMPLATE_FIELDS.every((k) => obj(a)[k] === obj(b)[k]);

/**
 * What Masakari is told must fence like our checks: with our remediation template (the
 * OutOfServiceTaint SNR template, so that volumes detach and Masakari evacuates only once the
 * host is fenced), and, where a segment may hold a quorum node (a compute node that is also
 * controlPlane or etcd: every node of the small topology), one node at a time.
 */
const segmentRemediationCheck: PlacementCheck = {
  check: ({ plan, nodes }) => {
    const told = segmentHealthChecks(plan);
    const template = ourTemplate(plan);
    if (!told || template === undefined) return [];
    const checks: Check[] = [];
    if (!sameTemplate(told.remediationTemplate, template)) {
      checks.push({
        level: "error",
        code: "masakari-segment-remediation",
        message: `Masakari's segment NodeHealthChecks would remediate with ${JSON.stringify(told.remediationTemplate)}, not the template of this repository's checks (${JSON.stringify(template)}): segment hosts would be fenced differently, or by a template that does not exist`,
        fix: `remove the override of ${SEGMENT_HEALTH_CHECKS}.remediationTemplate in openkeel:services.masakari.values`,
        path: `openkeel:services.masakari.values.${SEGMENT_HEALTH_CHECKS}`,
      });
    }
    const quorum = segmentHosts(nodes).filter(holdsQuorum);
    if (quorum.length > 0 && told.maxUnhealthy !== 1) {
      checks.push({
        level: "error",
        code: "masakari-segment-remediation",
        message: `Masakari's segment NodeHealthChecks may fence ${told.maxUnhealthy} nodes at once, but compute nodes that hold a quorum (Galera, RabbitMQ, OVN central or etcd) may be segment hosts: ${quorum.map((n) => n.name).join(", ")}; a segment could fence a quorum away (§ 5.6, § 6.1: maxUnhealthy 1)`,
        fix: `set openkeel:platform.medik8s.maxUnhealthy.compute to 1 (segment hosts are compute nodes), and remove any ${SEGMENT_HEALTH_CHECKS}.maxUnhealthy in openkeel:services.masakari.values`,
        path: "openkeel:platform.medik8s.maxUnhealthy.compute",
      });
    }
    return checks;
  },
};

/** Masakari's `nodePlacement.<x>` (§ 5.2 "What is implemented"): a nodeSelector that wins over the role, tolerations added to it. */
const masakariNodePlacement = z.strictObject({ nodeSelector: nodeSelectorSchema.optional(), tolerations: z.array(tolerationSchema).optional() });
const placedAlsoBy = (base: HelperPlaced, key: string): HelperPlaced => ({
  ...base,
  winningNodeSelector: ["nodePlacement", key, "nodeSelector"],
  addedTolerations: ["nodePlacement", key, "tolerations"],
});

export const masakari = openkeelService({
  name: MASAKARI,
  chart: "openkeel-masakari",
  components: { api: placedAlsoBy(api(30630), "api"), engine: placedAlsoBy(worker(), "engine") },
  apiJob: true,
  settings: {
    nodePlacement: z.strictObject({ api: masakariNodePlacement.optional(), engine: masakariNodePlacement.optional() }).optional(),
    // our contract for the chart (§ 5.6): what Masakari puts in each segment's NodeHealthCheck
    [SEGMENT_HEALTH_CHECKS]: segmentHealthChecksSchema.optional(),
  },
  values: (ctx) => masakariValues(ctx.remediation),
  usesAtRunTime: [
    {
      facts: [fact.api("remediation.medik8s.io", "NodeHealthCheck")],
      why: "its engine creates one NodeHealthCheck per failover segment (§ 5.6), a kind OLM installs with Medik8s",
    },
  ],
  placementChecks: [segmentOverlap, segmentRemediationCheck],
  docs: {
    values: "`nodePlacement.api.nodeSelector`, `nodePlacement.engine.nodeSelector` (the controlPlane label, below); `segmentHealthChecks` (below)",
  },
});
