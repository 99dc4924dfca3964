// Skyline: the dashboard; two API replicas (§ 2.2: its budget keeps 1 of 2).
import { api } from "../components";
import { openkeelService } from "../service";

export const skyline = openkeelService({
  name: "skyline",
  chart: "openkeel-skyline",
  components: { api: api(30650, 2) },
  apiJob: true,
  docs: {
    components: "`api` (controlPlane, 2 replicas)",
  },
});
