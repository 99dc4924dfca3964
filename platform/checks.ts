// Plan checks of the platform settings that depend on the rest of the stack: the environment a
// key applies to, the nodes it names, the disks it needs. Same shape and exit code as the okadm
// plan rules of components/topology.ts.
import type { Config } from "../config/schema";
import type { PlanCheck, Topology } from "../topology/topology";
import { DEFAULT_MASTER_COUNT } from "./kube-ovn";

export function platformChecks(cfg: Config, topo: Topology): PlanCheck[] {
  const checks: PlanCheck[] = [];
  const p = cfg.platform;
  const storageNodes = topo.nodesByRole.storage;

  if (topo.production) {
    if (p.realBackends !== undefined) {
      checks.push({
        level: "error",
        code: "platform-key-environment",
        message: "realBackends only applies to the kind lab: production always installs KubeVirt, CDI, Longhorn and snapshots",
        remediation: "remove openkeel:platform.realBackends from this stack",
        path: "openkeel:platform.realBackends",
      });
    }
  } else {
    for (const key of ["kubeOvn.masterNodes", "medik8s"] as const) {
      const set = key === "medik8s" ? p.medik8s !== undefined : p.kubeOvn.masterNodes !== undefined;
      if (set) {
        checks.push({
          level: "error",
          code: "platform-key-environment",
          message: `${key} only applies to production: the kind lab runs neither Kube-OVN nor Medik8s`,
          remediation: `remove openkeel:platform.${key} from this stack`,
          path: `openkeel:platform.${key}`,
        });
      }
    }
  }

  const masters = p.kubeOvn.masterNodes;
  if (topo.production && masters) {
    masters.forEach((name, i) => {
      const node = cfg.nodes.find((n) => n.name === name);
      if (!node || !node.roles.includes("controlPlane")) {
        checks.push({
          level: "error",
          code: "kube-ovn-master-nodes",
          message: node ? `node '${name}' has no controlPlane role` : `no node named '${name}' in openkeel:nodes`,
          remediation: "list controlPlane nodes of the inventory only (Kube-OVN's ovn-central runs with the OpenKeel control plane, § 2.3)",
          path: `openkeel:platform.kubeOvn.masterNodes[${i}]`,
        });
      }
      if (masters.indexOf(name) !== i) {
        checks.push({
          level: "error",
          code: "kube-ovn-master-nodes",
          message: `node '${name}' is listed twice`,
          remediation: "list each master node once",
          path: `openkeel:platform.kubeOvn.masterNodes[${i}]`,
        });
      }
    });
    if (masters.length % 2 === 0) {
      checks.push({
        level: "error",
        code: "kube-ovn-master-nodes",
        message: `${masters.length} master nodes: an even RAFT cluster tolerates no more failures than one member less`,
        remediation: `list an odd number of nodes (${DEFAULT_MASTER_COUNT} is the default), or remove the key`,
        path: "openkeel:platform.kubeOvn.masterNodes",
      });
    }
  }

  const replicas = p.longhorn.volumeReplicas;
  if (replicas !== undefined && replicas > storageNodes.length) {
    checks.push({
      level: "error",
      code: "longhorn-volume-replicas",
      message: `${replicas} volume replicas but ${storageNodes.length} storage node(s): Longhorn places each replica of a volume on its own node, so volumes would stay degraded`,
      remediation: `set openkeel:platform.longhorn.volumeReplicas to at most ${storageNodes.length}, or give the storage role to more nodes`,
      path: "openkeel:platform.longhorn.volumeReplicas",
    });
  }

  return checks;
}
