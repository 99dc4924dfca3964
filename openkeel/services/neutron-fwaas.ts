// Neutron's firewall extension (§ 5.2: openkeel-neutron-fwaas): API and Jobs (placement.api) on the
// control plane; FWaaS has no agent with OVN.
import { api } from "../components";
import { openkeelService } from "../service";

export const neutronFwaas = openkeelService({
  name: "neutron-fwaas",
  chart: "openkeel-neutron-fwaas",
  components: { api: api(30540) },
  extends: "neutron",
  apiJob: true,
});
