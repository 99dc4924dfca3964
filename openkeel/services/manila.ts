// Manila: shared file systems. § 5.2 lists none of its components: each is placed by a post-render patch.
import { z } from "zod";
import { api, unlisted, UNLISTED, worker } from "../components";
import { openkeelService } from "../service";

export const manila = openkeelService({
  name: "manila",
  chart: "openkeel-manila",
  components: {
    api: unlisted(api(30580)),
    scheduler: unlisted(worker()),
    // our contract for the chart: the class of the shares' RWX volumes, whose share managers
    // (NFS servers) run on storage nodes (§ 2.2, § 2.3: platform/longhorn.ts longhorn-rwx)
    share: { ...worker(), settings: { storageClassName: z.string().min(1).optional() }, unlisted: UNLISTED },
  },
  values: (ctx) => (ctx.storage.sharedClass ? { share: { storageClassName: ctx.storage.sharedClass } } : {}),
  docs: {
    values: "`share.storageClassName` (below)",
  },
});
