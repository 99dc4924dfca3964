// The real `talosctl` at the Talos pin, for the commands that talk to a machine in maintenance mode
// (npm run facts). Built from the Go module proxy by ../shared/talosctl/build.sh into
// $HOME/.cache/openkeel-talosctl/talosctl-<tag> (the proxy refuses `go install` of it); any other
// talosctl may be named with --talosctl or $TALOSCTL, and must report the pinned tag.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { TALOS_VERSION } from "../platform/versions";
import { ToolError } from "./tools";

/** Where ../shared/talosctl/build.sh puts the binary of the pinned tag. */
export const talosctlCacheBinary = (home = os.homedir()) => path.join(home, ".cache", "openkeel-talosctl", `talosctl-${TALOS_VERSION}`);

/** `talosctl version --client` prints `Tag: v1.13.9`. */
function reportedTag(binary: string, env: NodeJS.ProcessEnv): string | undefined {
  const r = spawnSync(binary, ["version", "--client"], { encoding: "utf8", timeout: 20_000, env });
  return r.status === 0 ? /Tag:\s*(\S+)/.exec(r.stdout)?.[1] : undefined;
}

/** The talosctl to run: `given` (--talosctl), else $TALOSCTL, else the cached build, else `talosctl` on PATH; at the pinned tag. */
export function requireTalosctl(given: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const candidates = [given, env.TALOSCTL, talosctlCacheBinary(env.HOME ?? os.homedir()), "talosctl"].filter((c): c is string => c !== undefined && c !== "");
  const tried: string[] = [];
  for (const c of candidates) {
    if (c.includes(path.sep) && !fs.existsSync(c)) {
      tried.push(`${c} (absent)`);
      continue;
    }
    const tag = reportedTag(c, env);
    if (tag === TALOS_VERSION) return c;
    tried.push(`${c} (${tag ? `reports ${tag}` : "does not run"})`);
    if (c === given) break;
  }
  throw new ToolError(
    `no talosctl ${TALOS_VERSION} found: tried ${tried.join(", ")}. Fix: build it with ../shared/talosctl/build.sh (about 10 minutes), or pass --talosctl <path to talosctl ${TALOS_VERSION}>`,
  );
}
