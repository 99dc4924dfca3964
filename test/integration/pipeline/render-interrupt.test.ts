// A render is atomic (issue 38): each stack is written whole or not at all. SIGINT or SIGTERM stops
// the real CLI promptly while it writes, its temporary folder removed and the stacks not yet written
// as they were; a render killed outright (SIGKILL) leaves its folder, and the next render and `npm
// run drift` clear it, saying so in one line. The CLI is stopped where it writes through its test
// pause (OPENKEEL_RENDER_TEST_PAUSE_MS), while its temporary folder exists.
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { capture } from "../../../cli/cli";
import { tsCommand } from "../../../cli/ts-command";
import { clearLeftovers, leftovers, readTree, writeStackDir } from "../../../cli/write";
import { renderCommand } from "../../../pipeline/render-command";
import { driftCommand } from "../../../review/drift-command";
import { tempFolders } from "../../helpers/repos";
import { REPO } from "../../helpers/stacks";

const tmp = tempFolders();

/** A stacks folder with lab alone, and its render beside it (what rendered/ would hold). */
async function labFixture(): Promise<{ stacks: string; out: string }> {
  const dir = tmp("openkeel-interrupt-");
  const stacks = path.join(dir, "stacks");
  fs.mkdirSync(stacks);
  fs.copyFileSync(path.join(REPO, "stacks/Pulumi.lab.yaml"), path.join(stacks, "Pulumi.lab.yaml"));
  const out = path.join(dir, "rendered");
  expect((await capture(renderCommand, ["--stacks-dir", stacks, "--out", out])).code).toBe(0);
  return { stacks, out };
}

/** A pid that ran and no longer runs. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", ""]);
  return r.pid!;
}

async function until(what: string, ok: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The real render CLI, paused while it writes lab's temporary folder, then sent `signal`: its exit
 * (code or signal), its stderr, and how long it took to end after the signal.
 */
async function renderStoppedBy(signal: NodeJS.Signals, f: { stacks: string; out: string }) {
  const child = spawn(...tsCommand(path.join(REPO, "scripts/render.ts"), ["--stacks-dir", f.stacks, "--out", f.out]), {
    cwd: REPO,
    env: { ...process.env, OPENKEEL_PROGRESS: "0", OPENKEEL_RENDER_TEST_PAUSE_MS: "600000" },
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, sig) => resolve({ code, signal: sig })),
  );
  // not only made but written into: the render pauses after its first turn of files (cli/write.ts),
  // and a folder seen the moment it is made may be killed before its first file (a loaded CI once)
  const tmp = path.join(f.out, `.lab.tmp-${child.pid}`);
  await until("the render's temporary folder, written into", () => fs.existsSync(tmp) && fs.readdirSync(tmp).length > 0);
  const sent = Date.now();
  child.kill(signal);
  const end = await ended;
  return { ...end, stderr, afterSignalMs: Date.now() - sent, pid: child.pid! };
}

describe("a render stopped while it writes", () => {
  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)("%s: the CLI stops at once (exit %i), its temporary folder removed, the previous render as it was", async (signal, code) => {
    const f = await labFixture();
    const before = readTree(f.out);
    const r = await renderStoppedBy(signal, f);
    expect(r.code).toBe(code);
    // the pause is ten minutes: only the signal ended it
    expect(r.afterSignalMs).toBeLessThan(10_000);
    expect(r.stderr).toBe(`render stopped by ${signal}: ${f.out}/lab/ as before (no stack half-written, no temporary folder left)\n`);
    expect(fs.readdirSync(f.out)).toEqual(["lab"]);
    expect(readTree(f.out)).toEqual(before);
  });

  it("SIGKILL leaves the temporary folder; drift clears it in one line and compares the rest (not a stale file per leftover file)", async () => {
    const f = await labFixture();
    const r = await renderStoppedBy("SIGKILL", f);
    expect(r.signal).toBe("SIGKILL");
    const leftover = `.lab.tmp-${r.pid}`;
    expect(fs.readdirSync(f.out).sort()).toEqual([leftover, "lab"]);
    expect(fs.readdirSync(path.join(f.out, leftover)).length).toBeGreaterThan(0);

    // and one of a render still running (this process), which is no leftover yet
    const running = `.lab.tmp-${process.pid}`;
    fs.mkdirSync(path.join(f.out, running));
    fs.writeFileSync(path.join(f.out, running, "index.yaml"), "half: written\n");

    const drift = await capture(driftCommand, ["--stacks-dir", f.stacks, "--rendered", f.out]);
    expect(drift.stderr).toBe("");
    expect(drift.code).toBe(0);
    expect(drift.stdout.split("\n").filter((l) => l.includes(".lab.tmp-"))).toEqual([
      `${f.out}/: cleared what an interrupted render left (process ${r.pid}, no longer running): ${leftover}/ removed`,
      `${f.out}/${running}/: a render under way (process ${process.pid}) writes it; not compared`,
    ]);
    expect(drift.stdout).toMatch(/is up to date: \d+ files match a fresh render/);
    expect(fs.readdirSync(f.out).sort()).toEqual([running, "lab"]);
  });

  it("SIGKILL, then the next render clears what it left, in one line", async () => {
    const f = await labFixture();
    const r = await renderStoppedBy("SIGKILL", f);
    const next = await capture(renderCommand, ["--stacks-dir", f.stacks, "--out", f.out]);
    expect(next.code).toBe(0);
    expect(next.stdout.split("\n")[0]).toBe(
      `${f.out}/: cleared what an interrupted render left (process ${r.pid}, no longer running): .lab.tmp-${r.pid}/ removed`,
    );
    expect(fs.readdirSync(f.out)).toEqual(["lab"]);
  });
});

describe("signals outside the writing", () => {
  it("the preload of every offline command listens to neither SIGINT nor SIGTERM, so a signal ends a command at once (a listener waits for the event loop)", () => {
    const script = path.join(tmp("openkeel-listeners-"), "listeners.ts");
    fs.writeFileSync(script, 'process.stdout.write(JSON.stringify(["SIGINT", "SIGTERM"].map((s) => process.listenerCount(s))));\n');
    const r = spawnSync(...tsCommand(script), { cwd: REPO, encoding: "utf8", env: { ...process.env, OPENKEEL_CODE_CACHE: "1" } });
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toEqual([0, 0]);
  });
});

describe("writeStackDir and leftovers", () => {
  it("aborted between two files: rejects with the reason, no temporary folder, the previous render untouched", async () => {
    const f = await labFixture();
    const before = readTree(f.out);
    const stop = new AbortController();
    const files = [...before.entries()].filter(([p]) => p.startsWith("lab/")).map(([p, content]) => ({ path: p.slice(4), content: `${content}# changed\n` }));
    expect(files.length).toBeGreaterThan(32);
    const why = new Error("stopped");
    const written = writeStackDir(f.out, "lab", files, {
      signal: stop.signal,
      afterTurn: async () => {
        expect(fs.readdirSync(f.out)).toContain(`.lab.tmp-${process.pid}`);
        stop.abort(why);
      },
    });
    await expect(written).rejects.toBe(why);
    expect(fs.readdirSync(f.out)).toEqual(["lab"]);
    expect(readTree(f.out)).toEqual(before);
  });

  it("a stack folder moved aside by a render killed between its two renames goes back whole; a running render's folders are left alone", async () => {
    const f = await labFixture();
    const before = readTree(f.out);
    const dead = deadPid();
    fs.renameSync(path.join(f.out, "lab"), path.join(f.out, `.lab.old-${dead}`));
    fs.mkdirSync(path.join(f.out, `.lab.tmp-${dead}`));
    fs.mkdirSync(path.join(f.out, `.lab.tmp-${process.pid}`));
    expect(new Map(leftovers(f.out).map((l) => [l.name, l.running]))).toEqual(
      new Map([
        [`.lab.old-${dead}`, false],
        [`.lab.tmp-${dead}`, false],
        [`.lab.tmp-${process.pid}`, true],
      ]),
    );
    expect(clearLeftovers(f.out, "rendered")).toBe(
      `rendered/: cleared what an interrupted render left (process ${dead}, no longer running): .lab.old-${dead}/ moved back to lab/, .lab.tmp-${dead}/ removed`,
    );
    expect(fs.readdirSync(f.out).sort()).toEqual([`.lab.tmp-${process.pid}`, "lab"]);
    fs.rmdirSync(path.join(f.out, `.lab.tmp-${process.pid}`));
    expect(readTree(f.out)).toEqual(before);
    expect(clearLeftovers(f.out)).toBeUndefined();
  });
});
