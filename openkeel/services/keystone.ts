// Keystone, the identity service: every other service registers its endpoints there, so every
// other release waits for its own.
import { api } from "../components";
import { openkeelService } from "../service";

export const keystone = openkeelService({
  name: "keystone",
  chart: "openkeel-keystone",
  components: {
    api: { ...api(30500), withoutIt: "without Keystone, every API of the cloud refuses its requests (they all authenticate through it)" },
  },
  identity: true,
  apiJob: true,
});
