// Neutron's VPN extension (§ 5.2: openkeel-neutron-vpnaas). Its agent DaemonSet follows the chassis
// (agent.nodeSelector): it runs the IPsec processes in the router namespaces of the chassis it
// shares the node with, on the same nodes, every taint tolerated.
import { api, CHASSIS, chassisSelector } from "../components";
import { openkeelService } from "../service";

export const neutronVpnaas = openkeelService({
  name: "neutron-vpnaas",
  chart: "openkeel-neutron-vpnaas",
  components: { api: api(30550), agent: { kind: "DaemonSet", nodeSelector: chassisSelector, design: CHASSIS } },
  extends: "neutron",
  apiJob: true,
  docs: {
    components: "`api` (controlPlane)",
    values: "`agent.nodeSelector` (the chassis label: the agent follows the chassis, below)",
  },
});
