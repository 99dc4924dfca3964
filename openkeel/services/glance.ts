// Glance: the image service. Its release holds the images (their PVCs): protected.
import { api } from "../components";
import { openkeelService } from "../service";

export const glance = openkeelService({
  name: "glance",
  chart: "openkeel-glance",
  components: { api: api(30560) },
  protect: true,
  apiJob: true,
});
