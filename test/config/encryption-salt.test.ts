// The encryption salt of a stack file, made as the Pulumi CLI's passphrase provider makes it and
// added as one line. That the real CLI reads it (and leaves the file as it is) is held by
// test/integration/pipeline/encryption-salt.test.ts and the e2e's `pulumi stack init` step.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { parse, parseDocument, visit } from "yaml";
import { newEncryptionSalt, passphraseOpens, secretsKeys, withEncryptionSalt } from "../../config/encryption-salt";
import { SHIPPED_STACKS, STACKS_DIR } from "../helpers/stacks";

/** Bytes 0, 1, 2, … of each length asked for: a salt made with them is always the same. */
const counting = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => i));

/** The salt the real CLI (Pulumi v3.276.0, `pulumi stack init lab` on a file backend) wrote for the passphrase `openkeel-test`. */
const CLI_STATE = "v1:/8wj4z4CUws=:v1:Vkq4yjy/vtCtM8c5:7PPTKkrGL8tb8HDlSrcpNfzjk6zYcw==";

describe("the passphrase provider's state", () => {
  const state = newEncryptionSalt("correct horse", counting);

  it("is v1:<8-byte salt>:v1:<12-byte nonce>:<AES-256-GCM of `pulumi` and its tag>, as manager.go and crypt.go make it", () => {
    const [v, salt, v2, nonce, sealed] = state.split(":");
    expect([v, v2]).toEqual(["v1", "v1"]);
    expect(Buffer.from(salt, "base64")).toEqual(counting(8));
    expect(Buffer.from(nonce, "base64")).toEqual(counting(12));
    // 6 bytes of `pulumi`, 16 of the tag
    expect(Buffer.from(sealed, "base64")).toHaveLength(22);
  });

  it("the real CLI's opens with its passphrase: the format read from Pulumi's code is the CLI's", () => {
    expect(passphraseOpens(CLI_STATE, "openkeel-test")).toBe(true);
  });

  it("a text that is no state is said to be none, before any key is derived (opening one: test/integration/pipeline/encryption-salt.test.ts)", () => {
    expect(passphraseOpens("v1:abc", "correct horse")).toBeUndefined();
    expect(passphraseOpens(state.replace(/^v1:/, "v2:"), "correct horse")).toBeUndefined();
    expect(passphraseOpens(state.replace(/:v1:[^:]+:/, ":v1:AAAA:"), "correct horse")).toBeUndefined();
  });
});

describe("the salt line in a stack file", () => {
  it.each(SHIPPED_STACKS)("%s: one line added at the end; every byte before it, every alias and every value as they were", (stack) => {
    const text = fs.readFileSync(path.join(STACKS_DIR, `Pulumi.${stack}.yaml`), "utf8");
    const { text: salted, line } = withEncryptionSalt(text, "v1:c2FsdA==:v1:bm9uY2U=:c2VhbGVk");
    expect(salted.startsWith(text)).toBe(true);
    expect(salted.slice(text.length)).toBe("encryptionsalt: v1:c2FsdA==:v1:bm9uY2U=:c2VhbGVk\n");
    expect(salted.split("\n")[line - 1]).toBe("encryptionsalt: v1:c2FsdA==:v1:bm9uY2U=:c2VhbGVk");
    expect(parse(salted)).toEqual({ ...parse(text), encryptionsalt: "v1:c2FsdA==:v1:bm9uY2U=:c2VhbGVk" });
    const aliases = (t: string) => {
      let n = 0;
      visit(parseDocument(t), { Alias: () => void n++ });
      return n;
    };
    expect(aliases(salted)).toBe(aliases(text));
    expect(secretsKeys(salted)).toEqual({ encryptionsalt: "v1:c2FsdA==:v1:bm9uY2U=:c2VhbGVk" });
  });

  it("a file without a final newline gets one before the line; an empty one holds the line alone", () => {
    expect(withEncryptionSalt("config: {}", "v1:x").text).toBe("config: {}\nencryptionsalt: v1:x\n");
    expect(withEncryptionSalt("", "v1:x")).toEqual({ text: "encryptionsalt: v1:x\n", line: 1 });
  });

  it("reads which provider a file names", () => {
    expect(secretsKeys("secretsprovider: awskms://alias/k\nencryptedkey: abc\nconfig: {}\n")).toEqual({
      secretsprovider: "awskms://alias/k",
      encryptedkey: "abc",
    });
    expect(secretsKeys("config: {}\n")).toEqual({});
  });
});
