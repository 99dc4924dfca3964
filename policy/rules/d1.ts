// D1: production selects and writes role labels only with the hardened keys
// `node-restriction.kubernetes.io/openkeel-<role>` (a kubelet cannot set them); taint keys stay
// `node-role.openkeel.io/<role>` (NodeRestriction restricts labels, not taints). Labs are exempt.
import { chassisLabelKey, DEFAULT_ROLE_PREFIX, HARDENED_ROLE_PREFIX, ROLES, roleLabelKey, roleOfLabelKey, roleTaint } from "../../config/roles";
import { chartOf, type Finding, get, RELEASE_TYPE, resourceRule, type ResourceView, valuesPath, walk } from "./common";
import { parsedRecord } from "./post-render";

/** A path segment under which role keys are taint keys (tolerations, taints, Longhorn's taintToleration). */
const TAINT_CONTEXT = /toleration|taint/i;
const DEFAULT_KEY = /node-role\.openkeel\.io\/[a-z][a-z-]*/g;
const HARDENED_KEY = /node-restriction\.kubernetes\.io\/openkeel-[a-z][a-z-]*/g;
/** The lab's OVN chassis label: like a lab role key, a kubelet could set it on itself and attract the privileged chassis. */
const LAB_CHASSIS_KEY = chassisLabelKey("default");

function matches(text: string, re: RegExp, profile: "default" | "hardened") {
  return [...text.matchAll(re)].map((m) => m[0]).filter((k) => roleOfLabelKey(k)?.profile === profile);
}

function hardenedFor(defaultKey: string): string {
  const role = roleOfLabelKey(defaultKey)!.role;
  return roleLabelKey(role, "hardened");
}

/**
 * Every role label key (default profile) used outside a taint context, and every hardened key used
 * as a taint; in a post-render record, in the patches it holds.
 */
function roleKeyFindings(r: ResourceView): Finding[] {
  const findings: Finding[] = [];
  const where = (path: string[]) => `${r.name} (${r.type}) ${valuesPath(path, "(root)")}`;
  walk(parsedRecord(r), (path, value) => {
    const inTaint = path.some((seg) => TAINT_CONTEXT.test(seg));
    const key = path[path.length - 1];
    if (key !== undefined && !inTaint) {
      for (const k of matches(key, DEFAULT_KEY, "default")) {
        findings.push({
          message: `${where(path)}: role label key ${k} is the lab key, which a node's own kubelet can set`,
          fix: `use ${hardenedFor(k)} (hardened profile, D1); production stacks get it from labelProfile hardened`,
        });
      }
    }
    if (!inTaint && (key === LAB_CHASSIS_KEY || value === LAB_CHASSIS_KEY)) {
      findings.push({
        message: `${where(path)}: selects or writes the lab OVN chassis label ${LAB_CHASSIS_KEY}, which a node's own kubelet can set`,
        fix: `use ${chassisLabelKey("hardened")} (hardened profile, D1)`,
      });
    }
    if (typeof value !== "string") return;
    if (!inTaint) {
      for (const k of matches(value, DEFAULT_KEY, "default")) {
        findings.push({
          message: `${where(path)}: selects or writes the lab role label ${k}`,
          fix: `use ${hardenedFor(k)} (hardened profile, D1)`,
        });
      }
    } else {
      for (const k of matches(value, HARDENED_KEY, "hardened")) {
        const role = roleOfLabelKey(k)!.role;
        findings.push({
          message: `${where(path)}: taint key ${k} is a hardened label key; role taints keep their key`,
          fix: `use the taint key ${roleTaint(role).key} (D1 hardens labels only)`,
        });
      }
    }
  });
  return findings;
}

/** An OpenKeel chart places nothing by role unless `global.nodeRoles` defines the six roles as okadm does (§ 5.2). */
function nodeRolesFindings(r: ResourceView): Finding[] {
  const chart = chartOf(r);
  if (r.type !== RELEASE_TYPE || !chart?.startsWith("openkeel-")) return [];
  const findings: Finding[] = [];
  const roles = get(r.props.values, ["global", "nodeRoles", "roles"]);
  for (const role of ROLES) {
    const label = get(roles, [role, "label"]);
    const taintKey = get(roles, [role, "taint", "key"]);
    const want = roleLabelKey(role, "hardened");
    if (label !== want) {
      findings.push({
        message: `${r.name}: values.global.nodeRoles.roles.${role}.label is ${label === undefined ? "unset" : JSON.stringify(label)}`,
        fix: `set it to ${want}, as okadm passes it in production (§ 5.2, D1)`,
      });
    }
    if (taintKey !== roleTaint(role).key) {
      findings.push({
        message: `${r.name}: values.global.nodeRoles.roles.${role}.taint.key is ${taintKey === undefined ? "unset" : JSON.stringify(taintKey)}`,
        fix: `set it to ${roleTaint(role).key}: taint keys stay ${DEFAULT_ROLE_PREFIX}<role> in every profile`,
      });
    }
  }
  return findings;
}

export const d1HardenedRoleLabels = resourceRule(
  "D1",
  "d1-hardened-role-labels",
  `production writes and selects role labels only with the hardened keys ${HARDENED_ROLE_PREFIX}<role> (Node patches, global.nodeRoles, placement overrides, KubeVirt/CDI placement, NodeHealthCheck and Longhorn selectors); taint keys stay ${DEFAULT_ROLE_PREFIX}<role>`,
  (r) => (r.type.startsWith("kubernetes:") ? [...roleKeyFindings(r), ...nodeRolesFindings(r)] : []),
);
