// The lab's public endpoints (seed 004: the `openstack` CLI on the laptop reaches every OpenKeel API
// through NodePorts 30500–30998 published on 127.0.0.1, kind extraPortMappings in nodes/kind.ts).
// Each public API has a fixed NodePort, in its service's descriptor (./services/: `publicApi`; all of
// them: ./registry.ts labApiNodePorts); the
// lab's releases ask for it through `<component>.service` (our contract for the chart,
// docs/openkeel-values.md). Production reaches the APIs through the public ingress (D8) and writes
// no Service type.
import { z } from "zod";

/** The NodePorts the kind config publishes on the laptop's loopback (seed 004). */
export const LAB_NODE_PORTS = { first: 30500, last: 30998 } as const;

/**
 * The last block of ten of LAB_NODE_PORTS (30990–30998), which no service takes: the services take
 * one block each in install order from the first (49 before this one), and the worked example of
 * docs/openkeel-values.md ("Adding a service") takes this one, so that the next real service's
 * block is free and adding it touches nothing of the example.
 */
export const LAB_EXAMPLE_BLOCK = LAB_NODE_PORTS.first + Math.floor((LAB_NODE_PORTS.last - LAB_NODE_PORTS.first) / 10) * 10;

/** Kubernetes' default NodePort range (kube-apiserver --service-node-port-range). */
const NODE_PORT_RANGE = { first: 30000, last: 32767 } as const;

/** `<component>.service`: how the chart exposes a public API (our contract for the chart). */
export const serviceExposureSchema = z.strictObject({
  type: z.enum(["ClusterIP", "NodePort"]),
  nodePort: z.number().int().min(NODE_PORT_RANGE.first).max(NODE_PORT_RANGE.last).optional(),
});

/** One NodePort a release asks for: where (release, values path) and which port. */
export interface NodePortUse {
  release: string;
  path: (string | number)[];
  port: number;
}

/** A NodePort that two uses share, or that the lab does not publish: what is wrong, and the uses involved. */
export interface NodePortProblem {
  /** The uses that explain it, the one to blame first. */
  uses: NodePortUse[];
  message: string;
  fix: string;
}

const where = (u: NodePortUse) => `${u.release} ${u.path.join(".")}`;

/**
 * NodePorts taken twice (the API server refuses the second Service: "provided port is already
 * allocated"), and, in the lab, NodePorts outside the published range (unreachable from the laptop).
 */
export function nodePortProblems(uses: NodePortUse[], lab: boolean): NodePortProblem[] {
  const problems: NodePortProblem[] = [];
  const first = new Map<number, NodePortUse>();
  const free = lab ? ` in ${LAB_NODE_PORTS.first}-${LAB_NODE_PORTS.last}` : "";
  for (const use of uses) {
    const taken = first.get(use.port);
    if (taken) {
      problems.push({
        uses: [use, taken],
        message: `NodePort ${use.port} is asked for by both ${where(taken)} and ${where(use)}: the API server would refuse the second Service`,
        fix: `give one of them a free port${free} (docs/openkeel-values.md lists the lab's)`,
      });
    } else first.set(use.port, use);
    if (lab && (use.port < LAB_NODE_PORTS.first || use.port > LAB_NODE_PORTS.last)) {
      problems.push({
        uses: [use],
        message: `NodePort ${use.port} of ${where(use)} is outside the ports the kind config publishes on 127.0.0.1 (${LAB_NODE_PORTS.first}-${LAB_NODE_PORTS.last}): the laptop could not reach it`,
        fix: `choose a port in ${LAB_NODE_PORTS.first}-${LAB_NODE_PORTS.last}`,
      });
    }
  }
  return problems;
}
