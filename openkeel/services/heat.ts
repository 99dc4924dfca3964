// Heat: orchestration. § 5.2 lists none of its components: each is placed by a post-render patch.
import { api, unlisted, worker } from "../components";
import { openkeelService } from "../service";

export const heat = openkeelService({
  name: "heat",
  chart: "openkeel-heat",
  components: { api: unlisted(api(30600)), apiCfn: unlisted({ ...worker(), publicApi: { labNodePort: 30601 } }), engine: unlisted(worker()) },
});
