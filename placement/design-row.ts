// The design's § 2 matrix, row by row, carried by the component whose workloads a row is about
// (issue 47: a descriptor carries its design row). A row is transcribed from the design text
// (§ 2.1–2.3, § 5.1 for the role lists, § 5.6 for the NodeHealthChecks), never derived from the
// code that places the workloads: test/placement/placement-matrix.test.ts holds every placement of
// every stack to the row that matches it, and a placement without a row fails there.
import type { Role } from "../config/roles";

/** A group of § 5.6's NodeHealthChecks: a role's nodes, or the Kubernetes-only control plane. */
export type NhcGroup = Role | "kubernetesControlPlane";

/**
 * The nodes a row's workloads must reach: exactly the nodes carrying one of the roles; every node;
 * the Kubernetes control plane; a non-empty subset of the roles' nodes; or the nodes a
 * NodeHealthCheck of the group selects.
 */
export type DesignNodes = readonly Role[] | "every node" | "kubernetes control plane" | { within: readonly Role[] } | { nhc: NhcGroup };

export interface DesignRow {
  /** The placement report's names of the workloads it is about (`<unit>/<workload>`). */
  workloads: RegExp;
  reach: DesignNodes;
}
