// A retirement's step for the members of the OpenKeel releases that replicate their own data (D5,
// ./storage.ts): their strict-local Longhorn volumes stay on the node Longhorn evicts, so each
// member is moved by hand, in the "move-members" slot (lifecycle/contributor.ts), between the drain
// and the wait for Longhorn's eviction. The members are named from STRICT_LOCAL_VOLUMES, grouped by
// the role their nodes have (a service says so with `strictLocalVolume` on its component).
import { hasTrait } from "../config/lifecycle";
import type { Role } from "../config/roles";
import { stateChange, type Holding, type NodeTransition, type SlottedStep } from "../lifecycle/contributor";
import { joined } from "../lifecycle/feasibility";
import { LONGHORN_LOCAL_CLASS } from "../platform/longhorn";
import { holdsLonghornDisk } from "../platform/longhorn-lifecycle";
import { LONGHORN_NAMESPACE } from "../platform/longhorn-names";
import { STRICT_LOCAL_VOLUMES } from "./storage";

/** The members on a node of each role, in the order of STRICT_LOCAL_VOLUMES (the control plane's first). */
const MEMBERS_BY_ROLE: ReadonlyMap<Role, string> = (() => {
  const byRole = new Map<Role, string[]>();
  for (const v of STRICT_LOCAL_VOLUMES) {
    for (const role of Array.isArray(v.roles) ? v.roles : []) byRole.set(role, [...(byRole.get(role) ?? []), v.what]);
  }
  return new Map([...byRole].map(([role, names]) => [role, joined(names)]));
})();

/** What a node of each role holds of them: a node leaving with them takes their data away (D5: their one replica). */
export const STRICT_LOCAL_HOLDINGS: readonly Holding[] = [...MEMBERS_BY_ROLE].map(([role, names]) => ({ role, what: `the strict-local volumes of ${names}` }));

/** Into a state that evicts its data, on a node with a Longhorn disk: move the strict-local members of its roles. */
export function strictLocalMemberSteps(t: NodeTransition): SlottedStep[] {
  const { before: b, after: h } = t;
  if (!b || !h || !hasTrait(stateChange(t)?.to, "evictsData") || !holdsLonghornDisk(b)) return [];
  const members = [...MEMBERS_BY_ROLE].filter(([role]) => h.roles.includes(role)).map(([, names]) => names);
  if (members.length === 0) return [];
  return [
    {
      slot: "move-members",
      when: "after",
      what: "move the strict-local members",
      // by the replicas on the node: a drained member's volume is detached, no volume names the node any more
      command: `kubectl -n ${LONGHORN_NAMESPACE} get replicas.longhorn.io -o jsonpath='{range .items[?(@.spec.nodeID=="${t.node}")]}{.spec.volumeName}{"\\n"}{end}'; kubectl get pv -o jsonpath='{range .items[?(@.spec.storageClassName=="${LONGHORN_LOCAL_CLASS}")]}{.metadata.name} {.spec.claimRef.namespace}/{.spec.claimRef.name}{"\\n"}{end}'; then, one at a time, kubectl delete pvc (and its Pending pod) of each ${members.join(" or ")} member whose volume is in both lists`,
      why: "their strict-local volumes (D5) cannot follow them: a new empty PVC on another node of the role, and the member re-syncs from the others (§ 2.1); wait until its quorum is healthy again before the next. Its replica goes with its PVC, which lets the eviction finish",
    },
  ];
}
