// How the bench measures a process: its wall time, the CPU time of it and everything under it,
// the time to its first line of output, and the peak resident set of the largest process of its
// tree (VmHWM from /proc, polled while it runs; Linux), with the machine's load when it ran.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import { REPO_ROOT } from "../tools/tools";

export interface Measured {
  wallMs: number;
  /** CPU time of the process and every process under it (Linux: the children times of this one). */
  cpuMs?: number | undefined;
  /** The largest VmHWM of the process and the processes it started (when polled). */
  peakKiB?: number | undefined;
  /** Time to the first complete line on stdout. */
  firstLineMs?: number | undefined;
  /** The 1-minute load average when the process started. */
  load: number;
  stdout: string;
  stderr: string;
  code: number | null;
}

/**
 * A fresh folder in `root` (Linux's memory-backed /dev/shm by default), or undefined where it
 * cannot be made: a figure whose files are written there does not follow a disk's latency.
 */
export function memoryFolder(name: string, root = "/dev/shm"): string | undefined {
  try {
    return fs.mkdtempSync(`${root}/openkeel-bench-${name}-`);
  } catch {
    return undefined;
  }
}

/** The 1-minute load average, rounded: printed with every figure (the machine is shared). */
export const load1 = () => Math.round(os.loadavg()[0] * 100) / 100;
/** The 1-, 5- and 15-minute load averages, to two decimals. */
export const loads = () => os.loadavg().map((l) => Math.round(l * 100) / 100);

/** CPU time (ms) of this process' children that have ended: cutime + cstime of /proc/self/stat (Linux). */
export function childrenCpuMs(): number | undefined {
  try {
    const fields = fs.readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
    return (Number(fields[13]) + Number(fields[14])) * 10; // clock ticks (USER_HZ 100)
  } catch {
    return undefined;
  }
}

/** `pid` and its descendants (from /proc/<pid>/task/<tid>/children). */
function processTree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    let tasks: string[];
    try {
      tasks = fs.readdirSync(`/proc/${out[i]}/task`);
    } catch {
      continue;
    }
    for (const t of tasks) {
      try {
        for (const c of fs.readFileSync(`/proc/${out[i]}/task/${t}/children`, "utf8").split(" ").filter(Boolean)) out.push(Number(c));
      } catch {
        // gone already
      }
    }
  }
  return out;
}

function hwmKiB(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

export interface MeasureOptions {
  /** Poll the peak memory of the process tree. */
  peak?: boolean;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/** Run a process and measure it. One at a time: the children CPU times are this process'. */
export function measure(cmd: string, argv: string[], opts: MeasureOptions | boolean = {}): Promise<Measured> {
  const o = typeof opts === "boolean" ? { peak: opts } : opts;
  return new Promise((resolve, reject) => {
    const load = load1();
    const start = performance.now();
    const cpuBefore = childrenCpuMs();
    const child = spawn(cmd, argv, { cwd: o.cwd ?? REPO_ROOT, env: o.env ?? process.env });
    let stdout = "";
    let stderr = "";
    let firstLineMs: number | undefined;
    const peaks = new Map<number, number>();
    const poll = o.peak
      ? setInterval(() => {
          for (const pid of processTree(child.pid!)) peaks.set(pid, Math.max(peaks.get(pid) ?? 0, hwmKiB(pid)));
        }, 3)
      : undefined;
    child.stdout.on("data", (d) => {
      stdout += d;
      if (firstLineMs === undefined && stdout.includes("\n")) firstLineMs = performance.now() - start;
    });
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => {
      if (poll) clearInterval(poll);
      const cpuAfter = childrenCpuMs();
      const cpuMs = cpuBefore !== undefined && cpuAfter !== undefined ? cpuAfter - cpuBefore : undefined;
      const peakKiB = peaks.size ? Math.max(...peaks.values()) || undefined : undefined;
      resolve({ wallMs: performance.now() - start, cpuMs, peakKiB, firstLineMs, load, stdout, stderr, code });
    });
  });
}

/** A measured process that must have succeeded. */
export async function measureOk(what: string, cmd: string, argv: string[], opts: MeasureOptions = {}): Promise<Measured> {
  const m = await measure(cmd, argv, opts);
  if (m.code !== 0) throw new Error(`${what} failed (exit ${m.code}):\n${m.stdout.slice(-2000)}${m.stderr.slice(-4000)}`);
  return m;
}

/** The fastest of `n` runs by `key`, with the highest peak memory seen. */
export async function fastestOf<T extends { peakKiB?: number | undefined }>(n: number, f: () => Promise<T>, key: (t: T) => number): Promise<T> {
  let out: T | undefined;
  let peak = 0;
  for (let i = 0; i < n; i++) {
    const r = await f();
    peak = Math.max(peak, r.peakKiB ?? 0);
    if (!out || key(r) < key(out)) out = r;
  }
  return { ...out!, peakKiB: peak || undefined };
}
