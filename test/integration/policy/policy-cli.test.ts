// `npm run policy` end to end: exit codes, the text report and the JSON one, through the command's
// own function in-process (offline-engine/policy-command.ts: the real packs, one per environment, judge
// the programs run under the mocks), and once through the real CLI, with packs of its own, which
// must print and exit exactly as the function does.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { capture } from "../../../cli/cli";
import { tsCommand } from "../../../cli/ts-command";
import { policyCommand, type PolicyReportJson } from "../../../offline-engine/policy-command";
import { PackPool } from "../../../offline-engine/policy-run";
import { REPO, SHIPPED_STACKS, shippedRaw, tempStacks } from "../../helpers/stacks";

// The in-process runs share their packs, one per environment, as one command shares them among its
// stacks (each stack still an operation of its own: ConfigureStack, Configure with its pack config).
const packs = new PackPool();
afterAll(() => packs.close());
const policy = (...argv: string[]) => capture((args, io) => policyCommand(args, io, undefined, packs), argv);

/** prod-medium with the floating IPs centralized by a raw values override (D3). */
function centralizedStack(): string {
  const raw = structuredClone(shippedRaw("prod-medium")) as any;
  raw.services.neutron = { values: { gateway: { floatingIpMode: "centralized" } } };
  return tempStacks({ "prod-centralized": raw });
}

const tmpFile = (name: string) => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-policy-")), name);

const D3_RESOURCE = "  mandatory [d3-distributed-floating-ips] openkeel-neutron (kubernetes:helm.sh/v3:Release):";
const D3_MESSAGE = /gateway\.floatingIpMode is "centralized"\. Fix: set gateway\.floatingIpMode: distributed/;

describe("npm run policy", () => {
  it("passes every shipped stack (exit 0) and reports each one; --out writes the results as JSON", async () => {
    const out = tmpFile("results.json");
    const lines: string[] = [];
    const r = await capture((argv, io) => policyCommand(argv, io, (l) => lines.push(l), packs), ["--out", out]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    for (const stack of SHIPPED_STACKS)
      expect(r.stdout).toMatch(new RegExp(`^${stack} \\([a-z-]+\\): \\d+ resources analyzed, 0 mandatory and 0 advisory violation\\(s\\)$`, "m"));
    expect(r.stdout).toMatch(/policy: 4 stack\(s\) pass/);
    const report = JSON.parse(fs.readFileSync(out, "utf8")) as PolicyReportJson;
    expect(Object.keys(report.stacks)).toEqual(SHIPPED_STACKS);
    for (const stack of SHIPPED_STACKS) {
      expect(report.stacks[stack]).toMatchObject({ violations: [], passed: true, environment: (shippedRaw(stack) as any).environment });
      expect(r.stdout).toContain(`${stack} (${report.stacks[stack].environment}): ${report.stacks[stack].resources} resources analyzed`);
    }
    // progress: one line per stack, in order (the CLI shows them on a terminal only)
    expect(lines).toEqual(SHIPPED_STACKS.map((s, i) => `${s}: judging (${i + 1}/${SHIPPED_STACKS.length})`));
  });

  it("prints each violation (level, policy, resource, message with the fix) and exits 1", async () => {
    const r = await policy("--stacks-dir", centralizedStack());
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toMatch(/prod-centralized \(talos-production\): \d+ resources analyzed, 1 mandatory and 0 advisory/);
    expect(r.stdout).toContain(D3_RESOURCE);
    expect(r.stdout).toMatch(D3_MESSAGE);
    expect(r.stdout).toMatch(/policy: 1 stack\(s\) violate mandatory policies/);
  });

  it("--json: the results on stdout, one entry per violation, and nothing else; exit 1 still", async () => {
    const r = await policy("--stacks-dir", centralizedStack(), "--json");
    expect(r.code, r.stderr).toBe(1);
    const report = JSON.parse(r.stdout) as PolicyReportJson;
    const stack = report.stacks["prod-centralized"];
    expect(stack.passed).toBe(false);
    expect(stack.violations).toEqual([
      {
        policy: "d3-distributed-floating-ips",
        level: "mandatory",
        resource: "openkeel-neutron",
        type: "kubernetes:helm.sh/v3:Release",
        message: expect.stringMatching(D3_MESSAGE),
      },
    ]);
    // the policy's own words: what is wrong and the fix, without the description the engine prefixes
    expect(stack.violations[0].message).not.toMatch(/^D3: /);
  });

  it("honours a policy pack config like --policy-pack-config (advisory: exit 0, still printed)", async () => {
    const cfg = tmpFile("config.json");
    fs.writeFileSync(cfg, JSON.stringify({ "d3-distributed-floating-ips": "advisory" }));
    const r = await policy("--stacks-dir", centralizedStack(), "--policy-pack-config", cfg);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain("  advisory [d3-distributed-floating-ips] openkeel-neutron (kubernetes:helm.sh/v3:Release):");
  });

  it("a policy at level remediate: the pack is asked for remediations first, has none, and reports the violation as mandatory", async () => {
    const cfg = tmpFile("config.json");
    fs.writeFileSync(cfg, JSON.stringify({ "d3-distributed-floating-ips": "remediate" }));
    const r = await policy("--stacks-dir", centralizedStack(), "--policy-pack-config", cfg);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toContain(D3_RESOURCE);
  });

  it("rejects a policy pack config naming an unknown policy (exit 2, no stack trace)", async () => {
    const cfg = tmpFile("config.json");
    fs.writeFileSync(cfg, JSON.stringify({ "d9-no-such-policy": "advisory" }));
    const r = await policy("--stack", "lab", "--policy-pack-config", cfg);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/policy "d9-no-such-policy" is not in the pack \(it has: d1-hardened-role-labels, /);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("rejects a bad stack config (exit 2) and a bad command line (exit 2) before starting any pack, writing no --out file", async () => {
    const raw = { ...shippedRaw("prod-small"), taint: true };
    const out = tmpFile("results.json");
    const bad = await policy("--stacks-dir", tempStacks({ "prod-small": raw }), "--out", out);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Pulumi\.prod-small\.yaml: openkeel:taint: unknown key\. Fix: /);
    expect(fs.existsSync(out)).toBe(false);
    expect(fs.readdirSync(path.dirname(out))).toEqual([]);
    const usage = await policy("--stak", "lab");
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--stak/);
  });

  it("the real CLI prints and exits exactly as the function does (no progress off a terminal)", async () => {
    const dir = centralizedStack();
    const argv = ["--stacks-dir", dir, "--json"];
    const cli = spawnSync(...tsCommand("scripts/policy.ts", argv), { cwd: REPO, encoding: "utf8" });
    // the Pulumi program's plan warnings (ovs-two-stacks: every such stack has them) reach the real
    // CLI's stderr through the engine's diagnostics, which the in-process run does not print
    const runtime = (s: string) => s.replace(/^warning: \[runtime\] .*\n/gm, "");
    const fn = await policy(...argv);
    expect({ code: cli.status, stdout: cli.stdout, stderr: runtime(cli.stderr) }).toEqual({ ...fn, stderr: runtime(fn.stderr) });
  });
});
