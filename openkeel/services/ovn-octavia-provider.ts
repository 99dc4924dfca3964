// The OVN provider of Octavia: load balancers as OVN load balancers; two API replicas (§ 2.2).
import { api } from "../components";
import { openkeelService } from "../service";

export const ovnOctaviaProvider = openkeelService({
  name: "ovn-octavia-provider",
  chart: "openkeel-ovn-octavia-provider",
  components: { api: api(30660, 2) },
  apiJob: true,
  docs: {
    components: "`api` (controlPlane, 2 replicas)",
  },
});
