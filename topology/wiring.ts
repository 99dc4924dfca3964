// The per-node OVN wiring the inventory must give (§ 3.2, § 3.3, D3): with distributed floating
// IPs every hypervisor NATs its own VMs' floating IPs and every gateway carries SNAT, so each compute
// and network node of a production stack needs the physnet bridge mappings of its chassis; and
// mappings on a node that runs no chassis would be read by nothing.
import type { Check } from "../config/problems";
import type { Config } from "../config/schema";
import { chassisRoles } from "./services";
import type { Topology } from "./topology";

export function bridgeMappingChecks(cfg: Config, topo: Topology): Check[] {
  const chassis = chassisRoles(cfg, topo);
  const checks: Check[] = [];
  cfg.nodes.forEach((node, i) => {
    const wired = node.roles.filter((r) => r === "compute" || r === "network");
    if (topo.environment.physicalNetworks && wired.length > 0 && node.bridgeMappings === undefined) {
      checks.push({
        level: "error",
        code: "bridge-mappings-missing",
        message: `node '${node.name}' (${wired.join(", ")}) has no bridgeMappings: with distributed floating IPs (D3) its chassis reaches the provider networks through its own bridges`,
        fix: "set bridgeMappings: on the node, e.g. physnet1:br-ex (the physnets of its external VLANs and the OVS bridges they use)",
        path: `openkeel:nodes[${i}].bridgeMappings`,
      });
    }
    if (node.bridgeMappings !== undefined && !node.roles.some((r) => chassis.includes(r))) {
      checks.push({
        level: "error",
        code: "bridge-mappings-unused",
        message: `node '${node.name}' has bridgeMappings but runs no OVN chassis (the ${chassis.join(", ")} roles do), so nothing would read them`,
        fix: "remove bridgeMappings from the node, or give it the role its wiring is for",
        path: `openkeel:nodes[${i}].bridgeMappings`,
      });
    }
  });
  return checks;
}
