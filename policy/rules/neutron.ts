// Readers of the openkeel-neutron values that D2, D3 and D4 judge (§ 5.1), and of the nodes the
// OVN chassis runs on. The chassis is not placed by role: the chart reads `chassis.nodeSelector` and
// tolerates every taint (§ 5.2 "What is implemented"), so it runs on every node whose labels match
// that selector, and only the Node patches say which nodes those are.
import { chartOf, chartValues, get, isObject, NODE_PATCH_TYPE, type ResourceView, type Tree } from "./common";
import { NEUTRON_CHART } from "./charts";
import { effectivePlacement, type EffectivePlacement } from "./placement";
import { roleOfLabelKey, type Role } from "../../config/roles";

export interface NeutronView {
  values: Tree;
  own: Tree;
  placement(component: string, defaultRole?: Role): EffectivePlacement;
  /** `placement.<c>.enabled`, else `<c>.enabled`. */
  enabled(component: string): unknown;
  /** `chassis.nodeSelector`: the only thing that keeps the chassis off a node. */
  chassisSelector: unknown;
}

/**
 * A component's placement as the chart applies it: `placement.<component>`, except that a non-empty
 * `ovnCentral.nodeSelector` wins over OVN central's role (§ 5.2 "What is implemented").
 */
function chartPlacement(own: Tree, component: string): unknown {
  const p = get(own, ["placement", component]);
  const winning = component === "ovnCentral" ? get(own, ["ovnCentral", "nodeSelector"]) : undefined;
  if (!isObject(winning) || Object.keys(winning).length === 0) return p;
  return { ...(isObject(p) ? p : {}), nodeSelector: winning };
}

export function neutronView(r: ResourceView): NeutronView {
  const values = isObject(r.props.values) ? r.props.values : {};
  const own = chartValues(r, NEUTRON_CHART);
  return {
    values,
    own,
    placement: (component, defaultRole) => effectivePlacement(chartPlacement(own, component), values, defaultRole),
    enabled: (component) => get(own, ["placement", component, "enabled"]) ?? get(own, [component, "enabled"]),
    chassisSelector: get(own, ["chassis", "nodeSelector"]),
  };
}

/** The roles whose nodes are OVN chassis (§ 1.2: compute, network; containers for Zun's ports). */
export const CHASSIS_ROLES: readonly Role[] = ["compute", "network", "containers"];

/** A node as this stack's Node patches write it. */
export interface PatchedNode {
  urn: string;
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  roles: Set<Role>;
}

const strings = (v: unknown): Record<string, string> =>
  isObject(v) ? (Object.fromEntries(Object.entries(v).filter(([, x]) => typeof x === "string")) as Record<string, string>) : {};

export function patchedNodes(resources: ResourceView[]): PatchedNode[] {
  return resources
    .filter((r) => r.type === NODE_PATCH_TYPE)
    .map((r) => {
      const labels = strings(get(r.props, ["metadata", "labels"]));
      const roles = new Set(
        Object.keys(labels)
          .map((k) => roleOfLabelKey(k)?.role)
          .filter((x): x is Role => x !== undefined),
      );
      return {
        urn: r.urn,
        name: String(get(r.props, ["metadata", "name"]) ?? r.name),
        labels,
        annotations: strings(get(r.props, ["metadata", "annotations"])),
        roles,
      };
    });
}

/** Labels the kubelet sets itself, which no Node patch writes. */
function kubeletLabel(node: PatchedNode, key: string): string | undefined {
  if (key === "kubernetes.io/hostname") return node.name;
  if (key === "kubernetes.io/os") return "linux";
  return undefined;
}

/** The nodes a nodeSelector admits (a missing or empty selector admits every node). */
export function selectedNodes(selector: unknown, nodes: PatchedNode[]): PatchedNode[] {
  const sel = isObject(selector) ? Object.entries(selector) : [];
  return nodes.filter((n) => sel.every(([k, v]) => (n.labels[k] ?? kubeletLabel(n, k)) === v));
}

/** The neutron releases among the resources. */
export function neutronReleases(resources: ResourceView[]): ResourceView[] {
  return resources.filter((r) => chartOf(r) === NEUTRON_CHART);
}
