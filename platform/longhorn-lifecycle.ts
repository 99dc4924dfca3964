// Longhorn's part in a node's life (lifecycle/contributor.ts, docs/node-lifecycle.md): the eviction
// request a retiring storage node writes, its constraint in the feasibility model, and its steps
// of a transition, among them the move of the members whose strict-local volumes (D5) it cannot
// evict, named by what the other contributors hold (their `strictLocalMembers`).
import { hasTrait } from "../config/lifecycle";
import { stateChange, type Holding, type NodeLifecycle, type NodeTransition, type NodeView, type SlottedStep } from "../lifecycle/contributor";
import { APPLY_AS_PATCH_ANNOTATION, type K8sObject, type ManifestsUnit, manifestsUnit } from "../plan/plan";
import type { StackContext } from "./context";
import { longhornConstraint, longhornFacts } from "./longhorn-feasibility";
import {
  CREATE_DEFAULT_DISK_LABEL,
  DEFAULT_NODE_DRAIN_POLICY,
  LONGHORN_DRIVER,
  STRICT_LOCAL_CLASSES,
  LONGHORN_NAMESPACE,
  LONGHORN_NODE,
  LONGHORN_NODE_EVICTION_TYPE,
  LONGHORN_UNIT,
  STORAGE_CLASSES_UNIT,
} from "./longhorn-names";

/**
 * A retiring storage node asks Longhorn to move its replicas away: `spec.allowScheduling: false`
 * and `spec.evictionRequested: true` on its nodes.longhorn.io object (longhorn.io/v1beta2 Node, in
 * Longhorn's namespace, named as the Kubernetes node: longhorn/longhorn-manager
 * k8s/pkg/apis/longhorn/v1beta2/node.go; longhorn/longhorn
 * enhancements/20200727-add-replica-eviction-support-for-disks-and-nodes.md: eviction keeps each
 * volume's replica count by rebuilding elsewhere first). Longhorn creates that object when it
 * registers the node, so this repository only patches it (APPLY_AS_PATCH_ANNOTATION), forcing the
 * two fields away from longhorn-manager, which set them at creation. The strict-local volumes of
 * D5 are not moved by eviction: their members re-sync elsewhere (docs/node-lifecycle.md).
 */
export function evictionUnits(ctx: StackContext): ManifestsUnit[] {
  const retiring = ctx.topo.nodesByRole.storage.filter((n) => hasTrait(n.state, "evictsData"));
  if (retiring.length === 0) return [];
  const objects: K8sObject[] = retiring.map((n) => ({
    ...LONGHORN_NODE,
    metadata: {
      name: n.name,
      namespace: LONGHORN_NAMESPACE,
      annotations: { [APPLY_AS_PATCH_ANNOTATION]: "patch", "pulumi.com/patchForce": "true" },
    },
    spec: { allowScheduling: false, evictionRequested: true },
  }));
  return [manifestsUnit("longhorn-node-eviction", LONGHORN_NODE_EVICTION_TYPE, objects)];
}

/** A Longhorn disk node: its default disk (`true`), or its disks by path where it also holds a capacity disk (`config`). */
export const holdsLonghornDisk = (v: NodeView | undefined) => ["true", "config"].includes(v?.labels[CREATE_DEFAULT_DISK_LABEL] ?? "");

const evicting = (v: NodeView | undefined) => (v?.requests.length ?? 0) > 0;

function evict(node: string, why: string): SlottedStep {
  return {
    slot: "evacuate",
    when: "before",
    what: "Longhorn eviction",
    command: `kubectl -n ${LONGHORN_NAMESPACE} patch nodes.longhorn.io ${node} --type merge -p '{"spec":{"allowScheduling":false,"evictionRequested":true}}'`,
    why: `${why}; wait until Longhorn shows no replica on it before going on`,
  };
}

/**
 * Into a state that evicts its data, on a node with a Longhorn disk: move the strict-local members
 * of its roles (`held`: what the contributors keep there), in the "move-members" slot, between the
 * drain and the wait for the eviction, which their replicas would hold for ever.
 */
function strictLocalMemberSteps(t: NodeTransition, held: readonly Holding[]): SlottedStep[] {
  const { before: b, after: h } = t;
  if (!b || !h || !hasTrait(stateChange(t)?.to, "evictsData") || !holdsLonghornDisk(b)) return [];
  const members = held.flatMap((x) => (x.strictLocalMembers !== undefined && h.roles.includes(x.role) ? [x.strictLocalMembers] : []));
  if (members.length === 0) return [];
  return [
    {
      slot: "move-members",
      when: "after",
      what: "move the strict-local members",
      // by the replicas on the node: a drained member's volume is detached, no volume names the node any
      // more; the PVs of every strict-local class (prod-large's Swift devices are on the capacity class)
      command: `kubectl -n ${LONGHORN_NAMESPACE} get replicas.longhorn.io -o jsonpath='{range .items[?(@.spec.nodeID=="${t.node}")]}{.spec.volumeName}{"\\n"}{end}'; kubectl get pv -o jsonpath='{range .items[*]}{.spec.storageClassName} {.metadata.name} {.spec.claimRef.namespace}/{.spec.claimRef.name}{"\\n"}{end}' | grep -E '^(${STRICT_LOCAL_CLASSES.join("|")}) '; then, one at a time, kubectl delete pvc (and its Pending pod) of each ${members.join(" or ")} member whose volume is in both lists`,
      why: "their strict-local volumes (D5) cannot follow them: a new empty PVC on another node of the role, and the member re-syncs from the others (§ 2.1); wait until its quorum is healthy again before the next. Its replica goes with its PVC, which lets the eviction finish",
    },
  ];
}

/**
 * A retirement: waiting for the eviction pulumi up requested (the members whose strict-local volumes,
 * D5, cannot follow are moved before it: strictLocalMemberSteps).
 */
function retirementSteps(t: NodeTransition, b: NodeView, h: NodeView): SlottedStep[] {
  const steps: SlottedStep[] = [];
  if (!evicting(b) && evicting(h)) {
    steps.push({
      slot: "await-eviction",
      when: "after",
      what: "wait for the Longhorn eviction",
      command: `kubectl -n ${LONGHORN_NAMESPACE} get replicas.longhorn.io -o jsonpath='{range .items[?(@.spec.nodeID=="${t.node}")]}{.metadata.name}{"\\n"}{end}'`,
      why: "pulumi up asks Longhorn to evict its replicas (evictionRequested): it rebuilds each replicated one on another storage node, the strict-local ones went with their PVCs; go on once this lists nothing",
    });
  }
  return steps;
}

/**
 * What a node's life asks of Longhorn (docs/node-lifecycle.md): its eviction request (written by
 * evictionUnits) is waited for, and given back by hand when a retirement is called off; a node
 * that loses its disk or leaves is evicted first, and forgotten after.
 */
function longhornSteps(t: NodeTransition, held: readonly Holding[]): SlottedStep[] {
  const { node, before: b, after: h } = t;
  if (b && h) {
    const steps = [...strictLocalMemberSteps(t, held), ...retirementSteps(t, b, h)];
    if (evicting(b) && !evicting(h)) {
      steps.push({
        slot: "call-off",
        when: "after",
        what: "Longhorn scheduling",
        command: `kubectl -n ${LONGHORN_NAMESPACE} patch nodes.longhorn.io ${node} --type merge -p '{"spec":{"allowScheduling":true}}'`,
        why: "pulumi up withdraws the eviction request by giving back the two fields it forced, which leaves allowScheduling unset (false)",
      });
    }
    if (holdsLonghornDisk(b) && !holdsLonghornDisk(h))
      steps.push(evict(node, "it no longer holds a Longhorn disk, and the replicas on it would be lost with it"));
    return steps;
  }
  if (!b || !holdsLonghornDisk(b)) return [];
  return [
    // a retiring node was evicted while it was retiring
    ...(!hasTrait(b.state, "evictsData") ? [evict(node, "it holds a Longhorn disk, and the replicas on it would be lost with it")] : []),
    {
      slot: "forget",
      when: "after",
      what: "forget it in Longhorn",
      command: `kubectl -n ${LONGHORN_NAMESPACE} delete nodes.longhorn.io ${node}`,
      why: "Longhorn keeps its node object (and the eviction request pulumi up withdraws) until deleted",
    },
  ];
}

export const longhornLifecycle: NodeLifecycle = {
  // a retiring storage node's replicas are rebuilt elsewhere (evictionUnits)
  holds: [{ role: "storage", what: "Longhorn replicas", evicted: true }],
  constraints: [longhornConstraint((plan) => longhornFacts(plan, LONGHORN_UNIT, STORAGE_CLASSES_UNIT, LONGHORN_DRIVER, DEFAULT_NODE_DRAIN_POLICY))],
  requestFor: (o) =>
    o.apiVersion === LONGHORN_NODE.apiVersion && o.kind === LONGHORN_NODE.kind && o.metadata.namespace === LONGHORN_NAMESPACE ? o.metadata.name : undefined,
  steps: longhornSteps,
};
