// Fresh renders for comparisons (drift check, preview): a checkout's own `scripts/render.ts` run with
// `--out`, so each side renders with its own code, and any file the render writes is compared.
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { PROGRESS_MARK } from "../cli/cli";
import { tsCommand } from "../cli/ts-command";

export interface RenderRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `scripts/render.ts --out <outDir>` of `checkout`, run as `npm run render` runs it (cli/ts-command.ts). With
 * `onProgress`, the child's progress lines are relayed (and kept out of `stderr`, which holds what
 * went wrong); without, the child prints none.
 */
export function renderCheckout(checkout: string, outDir: string, extraArgs: string[] = [], onProgress?: (line: string) => void): Promise<RenderRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(...tsCommand(path.join(checkout, "scripts", "render.ts"), ["--out", outDir, ...extraArgs]), {
      cwd: checkout,
      env: { ...process.env, OPENKEEL_PROGRESS: onProgress ? "1" : "0" },
    });
    let stdout = "";
    let stderr = "";
    let pending = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => {
      pending += d;
      const lines = pending.split("\n");
      pending = lines.pop()!;
      for (const line of lines) {
        if (onProgress && line.startsWith(PROGRESS_MARK)) onProgress(line.slice(PROGRESS_MARK.length));
        else stderr += `${line}\n`;
      }
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr: stderr + pending }));
  });
}

function git(repo: string, argv: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync("git", ["-C", repo, ...argv], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The commit a ref names, or undefined when it names none. */
export function resolveCommit(repo: string, ref: string): string | undefined {
  const r = git(repo, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]);
  return r.code === 0 ? r.stdout.trim() : undefined;
}

/**
 * The tree of `commit` in `dir` (git archive: no worktree bookkeeping left in the repository), with
 * this checkout's node_modules linked in so that the base's scripts run.
 */
export function exportCommit(repo: string, commit: string, dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  const archive = spawnSync("git", ["-C", repo, "archive", "--format=tar", commit], { maxBuffer: 1024 * 1024 * 1024 });
  if (archive.status !== 0) throw new Error(`git archive ${commit} failed: ${archive.stderr?.toString()}`);
  const untar = spawnSync("tar", ["-x", "-C", dir], { input: archive.stdout });
  if (untar.status !== 0) throw new Error(`tar -x failed: ${untar.stderr?.toString()}`);
  const modules = path.join(dir, "node_modules");
  if (!fs.existsSync(modules)) fs.symlinkSync(fs.realpathSync(path.join(repo, "node_modules")), modules, "dir");
}
