// `npm run policy` end to end: exit codes and output, with the pack spawned once per stack as
// the engine does.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO, SHIPPED_STACKS, shippedRaw, tempStacks } from "./helpers/stacks";

function policy(...argv: string[]) {
  const r = spawnSync(process.execPath, [path.join(REPO, "node_modules/tsx/dist/cli.mjs"), "scripts/policy.ts", ...argv], {
    cwd: REPO,
    encoding: "utf8",
    timeout: 300_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** prod-medium with the floating IPs centralized by a raw values override (D3). */
function centralizedStack(): string {
  const raw = structuredClone(shippedRaw("prod-medium")) as any;
  raw.services.neutron = { values: { gateway: { floatingIpMode: "centralized" } } };
  return tempStacks({ "prod-centralized": raw });
}

describe("npm run policy", () => {
  it("passes every shipped stack (exit 0) and reports each one", () => {
    const r = policy();
    expect(r.code, r.out + r.err).toBe(0);
    for (const stack of SHIPPED_STACKS) expect(r.out).toMatch(new RegExp(`^${stack} \\([a-z-]+\\): \\d+ resources analyzed, 0 mandatory and 0 advisory violation\\(s\\)$`, "m"));
    expect(r.out).toMatch(/policy: 4 stack\(s\) pass/);
  });

  it("prints each violation (level, policy, resource, message with the fix) and exits 1", () => {
    const dir = centralizedStack();
    const r = policy("--stacks-dir", dir);
    expect(r.code, r.out + r.err).toBe(1);
    expect(r.out).toMatch(/prod-centralized \(talos-production\): \d+ resources analyzed, 1 mandatory and 0 advisory/);
    expect(r.out).toContain("  mandatory [d3-distributed-floating-ips] openkeel-neutron (kubernetes:helm.sh/v3:Release):");
    expect(r.out).toMatch(/gateway\.floatingIpMode is "centralized"\. Fix: set gateway\.floatingIpMode: distributed/);
    expect(r.out).toMatch(/policy: 1 stack\(s\) violate mandatory policies/);
  });

  it("honours a policy pack config like --policy-pack-config (advisory: exit 0, still printed)", () => {
    const dir = centralizedStack();
    const cfg = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-policy-")), "config.json");
    fs.writeFileSync(cfg, JSON.stringify({ "d3-distributed-floating-ips": "advisory" }));
    const r = policy("--stacks-dir", dir, "--policy-pack-config", cfg);
    expect(r.code, r.out + r.err).toBe(0);
    expect(r.out).toContain("  advisory [d3-distributed-floating-ips] openkeel-neutron (kubernetes:helm.sh/v3:Release):");
  });

  it("rejects a policy pack config naming an unknown policy (exit 2, no stack trace)", () => {
    const cfg = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-policy-")), "config.json");
    fs.writeFileSync(cfg, JSON.stringify({ "d9-no-such-policy": "advisory" }));
    const r = policy("--stack", "lab", "--policy-pack-config", cfg);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/policy "d9-no-such-policy" is not in the pack \(it has: d1-hardened-role-labels, /);
    expect(r.err).not.toMatch(/\n\s+at /);
  });

  it("rejects a bad stack config (exit 2) and a bad command line (exit 2) before starting any pack", () => {
    const raw = { ...shippedRaw("prod-small"), taint: true };
    const bad = policy("--stacks-dir", tempStacks({ "prod-small": raw }));
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/Pulumi\.prod-small\.yaml: openkeel:taint: unknown key\. Fix: /);
    const usage = policy("--stak", "lab");
    expect(usage.code).toBe(2);
    expect(usage.err).toMatch(/--stak/);
  });
});
