// Barbican: the key manager.
import { api, worker } from "../components";
import { openkeelService } from "../service";

export const barbican = openkeelService({
  name: "barbican",
  chart: "openkeel-barbican",
  components: { api: api(30610), worker: worker() },
  apiJob: true,
});
