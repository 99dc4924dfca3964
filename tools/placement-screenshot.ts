// The body of `scripts/placement-screenshot.ts` (its header comment is the command's --help).
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { listStacks } from "../config/stack-file";
import { args, EXIT_BAD_CONFIG, UserError } from "../cli/cli";

function findChromium(): string {
  const candidates = [process.env.CHROMIUM, "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"].filter(
    (c): c is string => typeof c === "string" && c.length > 0,
  );
  for (const c of candidates) {
    const r = spawnSync(c, ["--version"], { encoding: "utf8" });
    if (r.status === 0) return c;
  }
  throw new UserError(
    `no Chromium found (tried ${candidates.join(", ")}). Fix: install it (Debian: apt-get update && apt-get install -y chromium) or set CHROMIUM=/path/to/chromium`,
    EXIT_BAD_CONFIG,
  );
}

function svgSize(svg: string): { width: number; height: number } {
  const m = /<svg[^>]*\bwidth="(\d+)"[^>]*\bheight="(\d+)"/.exec(svg);
  if (!m) throw new UserError("the SVG has no width/height on its root element", 1);
  return { width: Number(m[1]), height: Number(m[2]) };
}

export function placementScreenshot() {
  const opts = args({
    stack: { type: "string", multiple: true },
    svg: { type: "string", multiple: true },
    rendered: { type: "string", default: "rendered" },
    out: { type: "string", default: path.join(os.tmpdir(), "openkeel-placement-screenshots") },
  });
  const chromium = findChromium();
  const svgs =
    opts.svg && opts.svg.length > 0
      ? opts.svg.map((f) => ({ name: path.basename(f, ".svg"), file: path.resolve(f) }))
      : (opts.stack && opts.stack.length > 0 ? opts.stack : listStacks()).map((s) => ({
          name: s,
          file: path.resolve(opts.rendered!, s, "placement.svg"),
        }));
  fs.mkdirSync(opts.out!, { recursive: true });
  let failed = 0;
  for (const { name, file } of svgs) {
    if (!fs.existsSync(file)) throw new UserError(`${file} does not exist. Fix: run npm run render first`, EXIT_BAD_CONFIG);
    const { width, height } = svgSize(fs.readFileSync(file, "utf8"));
    const png = path.resolve(opts.out!, `${name}.png`);
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-chromium-"));
    fs.rmSync(png, { force: true });
    const r = spawnSync(
      chromium,
      [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        `--user-data-dir=${profile}`,
        `--screenshot=${png}`,
        `--window-size=${width},${height}`,
        `file://${file}`,
      ],
      { encoding: "utf8", timeout: 120_000 },
    );
    fs.rmSync(profile, { recursive: true, force: true });
    const size = fs.existsSync(png) ? fs.statSync(png).size : 0;
    if (r.status !== 0 || size === 0) {
      failed++;
      console.error(`${name}: chromium did not produce a screenshot (exit ${r.status}):\n${r.stderr}`);
    } else {
      console.log(`${name}: ${file} → ${png} (${width}×${height}, ${size} bytes)`);
    }
  }
  return failed > 0 ? 1 : 0;
}
