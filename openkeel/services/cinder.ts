// Cinder: block storage.
import { api, worker } from "../components";
import { openkeelService } from "../service";

export const cinder = openkeelService({
  name: "cinder",
  chart: "openkeel-cinder",
  components: { api: api(30570), workers: worker() },
  apiJob: true,
});
