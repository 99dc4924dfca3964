// Swift: object storage. Its proxy on the control plane, its storage members one per storage node
// (§ 2.2, required anti-affinity), spread over the zones, their devices strict-local (D5), on the
// HDD capacity tier where the storage nodes have one (§ 6.3). § 5.2 lists neither: both are placed
// by post-render patches. Its release holds the objects: protected.
import { z } from "zod";
import { valueAt } from "../../config/problems";
import type { Check } from "../../config/problems";
import type { Config } from "../../config/schema";
import { labelKey } from "../../config/k8s";
import { ZONE_LABEL } from "../../config/roles";
import type { PlacementValue } from "../../config/placement";
import { addFirst, concerned, downList, nodeList, ofTotal, worstLost, type Inventory, type Loss, type NodeConstraint } from "../../lifecycle/feasibility";
import type { ComponentHostNeeds } from "../../plan/host";
import type { LossFinding } from "../../placement/failure-table";
import { num, obj } from "../../placement/workloads";
import type { StackContext } from "../../platform/context";
import { TALOS_CAPACITY_PATH } from "../../platform/longhorn";
import { LONGHORN_CAPACITY_CLASS } from "../../platform/longhorn-names";
import { serviceEnabled } from "../../topology/services";
import type { Topology } from "../../topology/topology";
import { api, sharedNodeTolerations, unlisted, UNLISTED, volumeSchema } from "../components";
import { releaseName, workloadSelector } from "../names";
import { openkeelService, releaseValues, type RecordedIndex } from "../service";

const SWIFT = "swift";

/** Swift keeps 3 replicas of each object, one per storage member (§ 6.1): fewer members cannot hold them apart. */
export const SWIFT_REPLICAS = 3;

/**
 * § 2.2: Swift storage spreads over the zones (Swift zones are its failure domains), softly: a
 * zone short of storage nodes still takes its members (the baseline's ScheduleAnyway, § 2).
 */
function swiftZoneSpread(): NonNullable<PlacementValue["topologySpreadConstraints"]>[number] {
  const labelSelector = { matchLabels: workloadSelector(releaseName(SWIFT), "storage") };
  return { maxSkew: 1, topologyKey: ZONE_LABEL, whenUnsatisfiable: "ScheduleAnyway" as const, labelSelector };
}

/**
 * A retirement or removal that leaves fewer storage nodes than Swift storage members: each member
 * needs a node of its own (required host anti-affinity), and the member of a leaving node cannot
 * start on a node that holds one (D5: its devices are strict-local, it re-syncs from a new PVC on a
 * free node). The rule of docs/node-lifecycle.md, `swift-members`: nodes staying < members.
 */
function swiftLeavingChecks(inv: Inventory, members: number): Check[] {
  const leaving = inv.leaving("storage");
  if (!concerned(inv, leaving)) return [];
  const left = inv.staying("storage").length;
  if (left >= members) return [];
  const release = releaseName(SWIFT);
  return [
    {
      level: "error",
      code: "swift-members",
      message: `${inv.judging === "removal" ? "removing" : "retiring"} ${nodeList(leaving)} leaves ${left} storage node(s) for the ${members} Swift storage members of ${release} (one per storage node, required anti-affinity; its devices strict-local, D5): the member of ${nodeList(leaving)} has no node to start on${left < SWIFT_REPLICAS ? `, and the ${SWIFT_REPLICAS} replicas of each object (§ 6.1) no longer fit on separate members` : ""}`,
      fix:
        left >= SWIFT_REPLICAS
          ? `${addFirst("a storage node", leaving)}; or lower openkeel:services.swift.replicas.storage to ${left} first (its own change, deployed: the StatefulSet removes its highest ordinal, and the rings move that member's replicas)`
          : addFirst("a storage node", leaving),
      path: inv.path(leaving),
    },
  ];
}

/** Two storage members down at once: the StatefulSet's PodDisruptionBudget holds the second drain. */
function swiftDownChecks(inv: Inventory, members: number): Check[] {
  const down = inv.down("storage").filter((n) => !n.removed);
  if (inv.judging !== "states" || down.length < 2) return [];
  return [
    {
      level: "error",
      code: "swift-members",
      message: `${downList(down)} would be drained at once: each runs one of the ${members} Swift storage members, whose strict-local devices cannot follow them (D5), and the storage StatefulSet's PodDisruptionBudget (maxUnavailable: 1, § 2.2) holds the second drain while the first member is down`,
      fix: "put one storage node at a time into maintenance or retiring; set the others back to active (or cordoned)",
      path: inv.path(down.slice(1)),
    },
  ];
}

/** Where the stack sets Swift's member count: its replicas override, or its raw values. */
function swiftMembersSet(cfg: Config): boolean {
  const swift = cfg.services.swift;
  return swift?.replicas.storage !== undefined || valueAt(swift?.values, ["storage", "replicas"]) !== undefined;
}

/**
 * Swift's members hold its ring's replicas apart: in distinct zones where the ring has them (Swift
 * zones = Kubernetes zones, § 6.3: ring.zoneLabel), else on distinct members ("as unique as
 * possible"). At worst an object has a replica on each lost member, up to one per zone.
 */
function swiftLoss(loss: Loss, members: number, zoned: boolean): LossFinding[] {
  const holders = loss.all("storage");
  if (!holders.some((n) => loss.lost.has(n.name))) return [];
  const replicas = Math.min(SWIFT_REPLICAS, members);
  const lost = worstLost(loss, holders, replicas, zoned && loss.zoneCount(holders) >= replicas);
  const at = `at worst ${ofTotal(lost, replicas)} replicas of an object on the lost nodes${zoned ? " (one per zone)" : ""}`;
  if (lost >= replicas) {
    return [
      {
        what: "Swift",
        level: "fatal",
        message: `${at}: objects whose replicas all sit there are unavailable until the nodes are back`,
        fix: `more storage nodes than the ${replicas} replicas, and for a zone's loss 3 zones with storage nodes (Swift zones = Kubernetes zones, § 6.3)`,
      },
    ];
  }
  return [
    {
      what: "Swift",
      level: "degraded",
      message: `${at}: reads come from the others, writes go to handoff members, and the replicators catch up once they are back`,
      fix: "bring the storage nodes back; a member lost for good re-syncs from a new, empty PVC (retire it, § 2.1)",
    },
  ];
}

const SWIFT_MEMBERS: NodeConstraint = {
  key: "swift",
  facts: (plan, cfg) => {
    const values = releaseValues(plan, releaseName(SWIFT));
    const members = num(obj(values?.storage).replicas);
    const zoneLabel = obj(values?.ring).zoneLabel;
    // `set`: the stack gives the count; without, it follows the storage nodes (swiftChangeFindings, below, refuses a count that moves so)
    return members === undefined
      ? undefined
      : { members, ...(swiftMembersSet(cfg) ? { set: "stack" } : {}), ...(typeof zoneLabel === "string" ? { ringZones: zoneLabel } : {}) };
  },
  judge(inv, facts) {
    const members = facts?.members;
    if (typeof members !== "number") return [];
    return [...swiftDownChecks(inv, members), ...swiftLeavingChecks(inv, members)];
  },
  loss: (loss, facts) => (typeof facts?.members === "number" ? swiftLoss(loss, facts.members, typeof facts.ringZones === "string") : []),
};

/** Swift's storage members set below the replicas of an object (§ 6.1), where the storage nodes could hold them apart. */
function swiftMembersIssue(replicas: number, needed: number): { message: string; fix: string } | undefined {
  const apart = Math.min(SWIFT_REPLICAS, needed);
  if (replicas >= apart) return undefined;
  return {
    message: `${replicas} Swift storage member(s) for the ${SWIFT_REPLICAS} replicas of each object (§ 6.1): ${SWIFT_REPLICAS - replicas + 1} of them share a member, and its loss loses them together`,
    fix: `set at least ${apart} (one member per storage node, up to the nodes there are)`,
  };
}

/**
 * § 6.3: Swift's devices on the capacity class are strict-local Longhorn volumes on the disk tagged
 * `capacity` of the pod's own node: the capacity user volume, which Talos mounts at its path.
 */
function swiftNeeds(ctx: StackContext): ComponentHostNeeds[] {
  if (ctx.storage.capacityClass === undefined) return [];
  return [
    {
      component: `${releaseName(SWIFT)}/storage`,
      needs: [
        {
          kind: "mount",
          anyOf: [TALOS_CAPACITY_PATH],
          why: `§ 6.3: its devices are ${ctx.storage.capacityClass} volumes, strict-local on the capacity disk of the pod's node`,
          fix: "give the capacity disk to every node Swift's storage pods may run on (openkeel:talos.capacityDisk: the storage nodes)",
        },
      ],
    },
  ];
}

/**
 * `1/4`: the share of Swift's partition replicas that move when its members go from `m` to `n`,
 * one device set of equal weight per member. The ring builder gives each device partitions in
 * proportion to its weight, gathers for a rebalance the partitions of removed devices and those of
 * devices holding more than they want, and keeps an object's replicas in distinct zones where it
 * can (openstack/swift doc/source/admin/objectstorage-ringbuilder.rst, "Build the ring", steps 1, 2
 * and 4, at 4cb76a41ce05): adding members moves their share, removing members moves theirs.
 */
function movedShare(m: number, n: number): string {
  return n > m ? `${n - m}/${n}` : `${m - n}/${m}`;
}

/**
 * Swift's rings (§ 6.1, § 6.3): the members' count and their zones (the zone label of their nodes)
 * say where each object's replicas are. A change of either moves data; a count that changes only
 * because the storage nodes did (the stack does not set it) is refused: nobody chose that move.
 */
function swiftChangeFindings(bi: RecordedIndex, hi: RecordedIndex, where: string): Check[] {
  const [b, h] = [bi.feasibility?.swift, hi.feasibility?.swift];
  const out: Check[] = [];
  const [before, after] = [b?.members, h?.members];
  if (typeof before === "number" && typeof after === "number" && before !== after) {
    const moves = `the rings move about ${movedShare(before, after)} of the objects' replicas, ${after > before ? "onto the new members" : "from the members that go to the others"} (the StatefulSet ${after > before ? "adds" : "removes"} its highest ordinals)`;
    if (h?.set !== "stack") {
      out.push({
        level: "error",
        code: "swift-members-implicit",
        message: `Swift's storage members would go from ${before} (${where}) to ${after} because the storage nodes did: openkeel:services.swift.replicas.storage is not set, so the count follows them, and ${moves}`,
        fix: `set openkeel:services.swift.replicas.storage: ${before} to keep the members (a new storage node then holds none), or ${after} to move the data deliberately`,
        path: "openkeel:services.swift.replicas.storage",
      });
    } else {
      out.push({
        level: "warning",
        code: "swift-ring",
        message: `Swift's storage members: ${before} → ${after}: ${moves}`,
        reason:
          "each member holds its devices' share of the rings; Swift re-replicates what moves, which loads the storage network until it is done (a rebalance moves one replica of a partition at most per min_part_hours)",
        fix: "expected when the member count is meant to change: change it by one member at a time, and let replication finish before the next",
        path: "openkeel:services.swift.replicas.storage",
      });
    }
  }
  if (typeof after !== "number") return out;
  const zoneOf = new Map(bi.nodes.filter((n) => n.roles.includes("storage")).map((n) => [n.name, n.zone]));
  for (const n of hi.nodes.filter((x) => x.roles.includes("storage") && zoneOf.has(x.name) && zoneOf.get(x.name) !== x.zone)) {
    out.push({
      level: "warning",
      code: "swift-ring",
      message: `storage node '${n.name}' moves from zone ${zoneOf.get(n.name) ?? "(none)"} to ${n.zone ?? "(none)"}: a Swift member on it takes its devices into another Swift zone, and the rings move their replicas so that each object's ${SWIFT_REPLICAS} stay in distinct zones`,
      reason: "Swift zones are the nodes' zones (§ 6.3): a member's zone is where its replicas count",
      fix: "expected when the node really moved; otherwise restore its zone",
      path: "openkeel:nodes",
    });
  }
  return out;
}

/** The capacity disk (openkeel:talos.capacityDisk) is Swift's HDD tier (§ 6.3): without Swift nothing would use it. */
function capacityChecks(cfg: Config, topo: Topology): Check[] {
  if (cfg.talos?.capacityDisk === undefined || serviceEnabled(cfg, topo, SWIFT)) return [];
  return [
    {
      level: "error",
      code: "swift-capacity",
      message: `the storage nodes get a capacity disk (Swift's HDD tier, StorageClass ${LONGHORN_CAPACITY_CLASS}), but Swift does not run in this stack, so nothing would use it`,
      fix: "remove openkeel:talos.capacityDisk, or run Swift (openkeel:services.swift.enabled: true)",
      path: "openkeel:talos.capacityDisk",
    },
  ];
}

export const swift = openkeelService({
  name: SWIFT,
  chart: "openkeel-swift",
  components: {
    proxy: unlisted(api(30590)),
    storage: {
      kind: "StatefulSet",
      placement: (ctx) => {
        const extra = sharedNodeTolerations("storage", ctx);
        return {
          role: "storage",
          antiAffinity: "required",
          ...(extra.length > 0 ? { extraTolerations: extra } : {}),
          ...(ctx.topo.zones.length > 1 ? { topologySpreadConstraints: [swiftZoneSpread()] } : {}),
        };
      },
      replicas: "perNode",
      withoutIt: "Swift stores no object",
      replicaCheck: swiftMembersIssue,
      settings: { devices: volumeSchema },
      unlisted: UNLISTED,
      design: { kind: "StatefulSet", roles: ["storage"] },
      guarantee: {
        row: "§ 2.2 Swift storage",
        source: "the post-render patch that carries it (openkeel/zone-spread.ts antiAffinityPostRender)",
        hostApart: true,
        zoneSpread: true,
      },
      strictLocalVolume: { what: "Swift storage", path: ["storage", "devices", "storageClassName"] },
    },
  },
  // Swift storage pods hold the object devices: without storage nodes there is nowhere to put them
  requiredRole: "storage",
  protect: true,
  // our contract for the chart: the ring puts each device in the Swift zone its node's zone label names (§ 6.3)
  settings: { ring: z.strictObject({ zoneLabel: labelKey }).optional() },
  values: (ctx) => ({
    // the HDD capacity tier where the storage nodes have one (§ 6.3), else D5's strict-local class
    storage: { devices: { storageClassName: ctx.storage.capacityClass ?? ctx.storage.strictLocalClass } },
    ...(ctx.topo.zones.length > 0 ? { ring: { zoneLabel: ZONE_LABEL } } : {}),
  }),
  host: swiftNeeds,
  constraints: [SWIFT_MEMBERS],
  concern: "data",
  changeFindings: swiftChangeFindings,
  planChecks: capacityChecks,
  docs: {
    components:
      "post-render patches (below): `proxy` (controlPlane); `storage` (storage, required anti-affinity, one per storage node; a `ScheduleAnyway` zone spread where the nodes carry several zones, § 2.2)",
    values: "`storage.devices.storageClassName: longhorn-local` (D5); `ring.zoneLabel` (below)",
  },
});
