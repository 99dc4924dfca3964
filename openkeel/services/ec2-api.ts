// The EC2 API. § 5.2 does not list it: its placement is a post-render patch.
import { api, unlisted } from "../components";
import { openkeelService } from "../service";

export const ec2Api = openkeelService({
  name: "ec2-api",
  chart: "openkeel-ec2-api",
  components: { api: unlisted(api(30680)) },
});
