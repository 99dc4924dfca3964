// Designate: DNS as a service. § 5.2 lists none of its components: each is placed by a post-render patch.
import { api, unlisted, worker } from "../components";
import { openkeelService } from "../service";

export const designate = openkeelService({
  name: "designate",
  chart: "openkeel-designate",
  components: { api: unlisted(api(30620)), central: unlisted(worker()), sink: unlisted(worker()), externalDns: unlisted(worker(1)) },
});
