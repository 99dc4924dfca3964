// How a process of this repository's TypeScript starts: `node -r cli/ts-run.cjs <file.ts>`, the
// command line of package.json's scripts. Every child process that runs a script or a bench phase
// is started through here, so that it runs as `npm run <script>` does (and pays what it pays).
import * as path from "node:path";

/** The preload that runs TypeScript (cli/ts-run.cjs). */
export const TS_RUN = path.join(__dirname, "ts-run.cjs");

/** Node's arguments to run `file` (a .ts file of this or another checkout) with `argv`. */
export function tsArgs(file: string, argv: readonly string[] = []): string[] {
  return ["-r", TS_RUN, file, ...argv];
}

/** The program and arguments that run `file` with `argv`: this Node, the preload, the file. */
export function tsCommand(file: string, argv: readonly string[] = []): [string, string[]] {
  return [process.execPath, tsArgs(file, argv)];
}
