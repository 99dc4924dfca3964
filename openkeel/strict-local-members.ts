// What the members of the OpenKeel releases that replicate their own data (D5, ./storage.ts) keep on
// their nodes: their strict-local volumes, whose one replica stays on the node the storage evicts, so
// each member is moved by hand before a node leaves with it. The members are named from
// STRICT_LOCAL_VOLUMES, grouped by the role their nodes have (a service says so with
// `strictLocalVolume` on its component); the storage's step moves them (`strictLocalMembers` of
// these holdings, lifecycle/contributor.ts: Longhorn's, platform/longhorn-lifecycle.ts).
import type { Role } from "../config/roles";
import type { Holding } from "../lifecycle/contributor";
import { joined } from "../lifecycle/feasibility";
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
export const STRICT_LOCAL_HOLDINGS: readonly Holding[] = [...MEMBERS_BY_ROLE].map(([role, names]) => ({
  role,
  what: `the strict-local volumes of ${names}`,
  strictLocalMembers: names,
}));
