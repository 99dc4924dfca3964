// Placement: the inventories and allocations Nova schedules against.
import { api } from "../components";
import { openkeelService } from "../service";

export const placement = openkeelService({
  name: "placement",
  chart: "openkeel-placement",
  components: { api: api(30510) },
  apiJob: true,
});
