// Credentials and shared secrets exist only as Pulumi secrets: every stack's program, run under the
// runtime mocks (the generated secret is MOCK_SECRET_VALUE), registers that value only inside
// Pulumi's secret envelope, and every file under rendered/ holds placeholders only.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { secretNames } from "../../../components/stack-secrets";
import { readTree } from "../../../cli/write";
import { planOf } from "../../helpers/plans";
import { MOCK_SECRET_VALUE, shippedRun } from "../../helpers/pulumi";
import { PLACEHOLDER, scanInputs, scanRendered, SECRET_SIG, SIG_KEY } from "../../helpers/secrets";
import { REPO, SHIPPED_STACKS } from "../../helpers/stacks";

describe("the scanners can fail", () => {
  it("an input holding the secret outside an envelope is a leak; inside one it is not", () => {
    const envelope = { [SIG_KEY]: SECRET_SIG, value: MOCK_SECRET_VALUE };
    const scan = scanInputs({ values: { a: envelope, b: [`x-${MOCK_SECRET_VALUE}`] }, [MOCK_SECRET_VALUE]: 1 }, MOCK_SECRET_VALUE);
    expect(scan.enveloped).toBe(1);
    expect(scan.leaks).toEqual(["values.b[0]", `.${MOCK_SECRET_VALUE} (key)`]);
  });

  it("a literal credential, a Secret's data or a secret value in a rendered file is reported", () => {
    expect(scanRendered("a.yaml", "x:\n  sharedSecret: hunter2\n  secretName: my-tls\n", [])).toEqual([
      "a.yaml: x.sharedSecret: holds a literal string, not a <pulumi-secret:NAME> placeholder",
    ]);
    expect(scanRendered("b.yaml", "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {url: 'mysql://u:p@h'}\n", [])).toHaveLength(1);
    expect(scanRendered("c.md", `value ${MOCK_SECRET_VALUE}`, [MOCK_SECRET_VALUE])).toEqual(["c.md: holds a secret value"]);
    expect(scanRendered("d.yaml", "x:\n  password: <pulumi-secret:db-password>\n", [])).toEqual([]);
  });
});

describe.each(SHIPPED_STACKS)("secrets of stack %s", (stack) => {
  const shipped = shippedRun(stack);

  it("every secret the plan uses is generated once, as a RandomPassword in StackSecrets", () => {
    const plan = planOf(stack);
    const names = [...secretNames(plan.phases)].sort();
    expect(names.length).toBeGreaterThan(0);
    const passwords = shipped.run.ofType("random:index/randomPassword:RandomPassword");
    expect(passwords.map((p) => p.name).sort()).toEqual(names);
    const holder = shipped.run.ofType("openkeel:secrets:StackSecrets");
    for (const p of passwords) expect(p.parent).toBe(holder[0].urn);
  });

  it("every recorded resource input holds the secret value only inside a Pulumi secret envelope", () => {
    let enveloped = 0;
    const leaks: string[] = [];
    for (const r of shipped.run.resources) {
      const scan = scanInputs(r.inputs, MOCK_SECRET_VALUE);
      enveloped += scan.enveloped;
      leaks.push(...scan.leaks.map((l) => `${r.type} ${r.name}: ${l}`));
    }
    expect(leaks).toEqual([]);
    // the value does reach the releases that need it (Nova and Neutron, D4): the scan saw it
    expect(enveloped).toBeGreaterThanOrEqual(2);
  });

  it("the program's outputs hold no secret value", () => {
    expect(JSON.stringify(shipped.run.outputs)).not.toContain(MOCK_SECRET_VALUE);
  });
});

describe("rendered/", () => {
  const files = readTree(path.join(REPO, "rendered"));

  it("every file holds placeholders only, each naming a secret the plan generates", () => {
    expect(files.size).toBeGreaterThan(0);
    const problems: string[] = [];
    const generated = new Set(SHIPPED_STACKS.flatMap((s) => [...secretNames(planOf(s).phases)]));
    let placeholders = 0;
    for (const [file, text] of files) {
      problems.push(...scanRendered(file, text, [MOCK_SECRET_VALUE]));
      for (const m of text.matchAll(/<pulumi-secret:[^>\s]*>/g)) {
        placeholders++;
        if (!PLACEHOLDER.test(m[0]) || !generated.has(m[0].slice("<pulumi-secret:".length, -1))) problems.push(`${file}: ${m[0]} names no generated secret`);
      }
    }
    expect(problems).toEqual([]);
    expect(placeholders).toBeGreaterThan(0);
  });

  it("is read whole: no file is skipped by the scan", () => {
    const count = (fs.readdirSync(path.join(REPO, "rendered"), { recursive: true, withFileTypes: true }) as fs.Dirent[]).filter((e) => e.isFile()).length;
    expect(files.size).toBe(count);
  });
});
