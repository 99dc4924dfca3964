// Child processes of the e2e: each command's output goes to a log file (and is returned), with its
// time; binaries come from PATH only (the driver checks them first).
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  seconds: number;
  log: string;
}

export interface RunOptions {
  cwd?: string | undefined;
  env?: NodeJS.ProcessEnv | undefined;
  log: string;
  input?: string | undefined;
  timeoutMs?: number | undefined;
  /** Called with each chunk of stdout (progress watching). */
  onStdout?: ((chunk: string) => void) | undefined;
}

export function which(bin: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, bin);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      /* next */
    }
  }
  return undefined;
}

export function run(cmd: string, args: string[], o: RunOptions): Promise<RunResult> {
  const started = Date.now();
  fs.mkdirSync(path.dirname(o.log), { recursive: true });
  fs.appendFileSync(o.log, `\n$ ${cmd} ${args.join(" ")}\n`);
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: o.cwd, env: o.env ?? process.env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let timer: NodeJS.Timeout | undefined;
    if (o.timeoutMs) timer = setTimeout(() => child.kill("SIGTERM"), o.timeoutMs);
    child.stdout!.on("data", (c: Buffer) => {
      const s = c.toString("utf8");
      stdout += s;
      fs.appendFileSync(o.log, s);
      o.onStdout?.(s);
    });
    child.stderr!.on("data", (c: Buffer) => {
      const s = c.toString("utf8");
      stderr += s;
      fs.appendFileSync(o.log, s);
    });
    // a command that exits without reading its input closes the pipe: not an error of ours
    child.stdin!.on("error", () => {});
    child.stdin!.end(o.input ?? "");
    child.on("close", (code, signal) => {
      if (timer) clearTimeout(timer);
      const seconds = (Date.now() - started) / 1000;
      fs.appendFileSync(o.log, `[exit ${code ?? signal} after ${seconds.toFixed(1)} s]\n`);
      resolve({ code: code ?? 128, stdout, stderr, seconds, log: o.log });
    });
    child.on("error", (e) => {
      stderr += String(e);
    });
  });
}

/** A background process (the stand-in controller), stopped by its own PID only. */
export function background(cmd: string, args: string[], log: string, env?: NodeJS.ProcessEnv): ChildProcess {
  fs.mkdirSync(path.dirname(log), { recursive: true });
  const fd = fs.openSync(log, "a");
  const child = spawn(cmd, args, { env: env ?? process.env, stdio: ["ignore", fd, fd] });
  fs.closeSync(fd);
  return child;
}

export async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((ok) => child.once("exit", () => ok()));
  child.kill("SIGTERM");
  const t = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(t);
}

export const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));
