// npm run post-render -- --patches <file>: the Helm post-renderer of one release
// (components/post-render.ts writes the executable that calls it, with the release's patches from
// the Plan; not `postrender`, which npm would run after every `npm run render`). Reads the
// release's manifests on stdin and writes them on stdout with each JSON merge patch applied to its
// one target (plan/post-render.ts). Exit 0; 1 a patch finds no target, or two (the chart no longer
// renders what the patch amends: the message names it and why the patch is there).
import { args, run, UserError } from "../cli/cli";
import { postRenderManifests, readPostRenderInput } from "../components/post-render";
import { PostRenderError } from "../plan/post-render";

run(async () => {
  const { patches } = args({ patches: { type: "string" } });
  if (!patches) throw new UserError("--patches <file> is required (the executable under .postrender/ passes it)", 2);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  try {
    process.stdout.write(postRenderManifests(Buffer.concat(chunks).toString("utf8"), readPostRenderInput(patches)));
  } catch (e) {
    if (e instanceof PostRenderError) throw new UserError(e.message, 1);
    throw e;
  }
});
