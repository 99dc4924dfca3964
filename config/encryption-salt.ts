// The `encryptionsalt:` of a stack file, made as the Pulumi CLI's passphrase secrets provider makes
// it, and written into the file as one more line: `pulumi stack init` then finds it and leaves the
// file as it is. Left to make it itself, the CLI saves the whole file anew (Pulumi v3.276.0, run on
// the shipped stacks: every YAML alias expanded into a copy of its anchor, `openkeel:taints: false`
// quoted as "false"; the comments stay; the salt goes last).
//
// Read at pulumi/pulumi v3.276.0:
//   - the state: pkg/secrets/passphrase/manager.go lines 163–191 (NewPassphraseSecretsManager): an
//     8-byte random salt, a crypter from the passphrase and that salt, `pulumi` encrypted with it,
//     `v1:<base64 salt>:<the ciphertext>`;
//   - the crypter: sdk/go/common/resource/config/crypt.go lines 165–170 (PBKDF2, SHA-256, 1,000,000
//     iterations, a 32-byte key), 179–183 (`v1:<base64 nonce>:<base64 sealed>`) and 232–249
//     (AES-256-GCM, a 12-byte random nonce, the tag after the ciphertext, as Go's Seal appends it);
//   - the check: manager.go lines 48–73 (symmetricCrypterFromPhraseAndState: the state opens to
//     `pulumi` with the passphrase, or the passphrase is incorrect);
//   - when `stack init` saves the file: pkg/cmd/pulumi/stack/io.go lines 420 and 505–510 and
//     secrets.go lines 316–330 (only when the secrets manager changed the salt, the encrypted key
//     or the provider); the DIY backend's default manager reuses a salt the file has
//     (backend/diy/backend.go line 1697 → passphrase.NewPromptingPassphraseSecretsManager, manager.go
//     lines 318–321).
import * as crypto from "node:crypto";
import { isMap, parseDocument } from "yaml";

const ITERATIONS = 1_000_000;
const KEY_BYTES = 32;
const SALT_BYTES = 8;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** What the passphrase provider encrypts to tell a right passphrase from a wrong one. */
const PROBE = "pulumi";

const keyOf = (passphrase: string, salt: Buffer) => crypto.pbkdf2Sync(passphrase, salt, ITERATIONS, KEY_BYTES, "sha256");

/** A new state for the passphrase, `v1:<salt>:v1:<nonce>:<sealed>`; `random`: the bytes (tests). */
export function newEncryptionSalt(passphrase: string, random: (n: number) => Buffer = crypto.randomBytes): string {
  const salt = random(SALT_BYTES);
  const nonce = random(NONCE_BYTES);
  const cipher = crypto.createCipheriv("aes-256-gcm", keyOf(passphrase, salt), nonce);
  const sealed = Buffer.concat([cipher.update(PROBE, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return `v1:${salt.toString("base64")}:v1:${nonce.toString("base64")}:${sealed.toString("base64")}`;
}

/** Whether the passphrase opens the state (what the CLI asks before it uses it); undefined: not a state it can read. */
export function passphraseOpens(state: string, passphrase: string): boolean | undefined {
  const parts = state.split(":");
  if (parts.length !== 5 || parts[0] !== "v1" || parts[2] !== "v1") return undefined;
  const [salt, nonce, sealed] = [parts[1], parts[3], parts[4]].map((p) => Buffer.from(p, "base64"));
  if (salt.length === 0 || nonce.length !== NONCE_BYTES || sealed.length <= TAG_BYTES) return undefined;
  const decipher = crypto.createDecipheriv("aes-256-gcm", keyOf(passphrase, salt), nonce);
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]).toString("utf8") === PROBE;
  } catch {
    return false;
  }
}

/** The keys of the secrets provider a stack file names at its top (`encryptionsalt`, `secretsprovider`, `encryptedkey`). */
export function secretsKeys(text: string): { encryptionsalt?: string; secretsprovider?: string; encryptedkey?: string } {
  const doc = parseDocument(text);
  const top = doc.contents;
  if (!isMap(top)) return {};
  const value = (key: string) => {
    const v = top.get(key);
    return typeof v === "string" ? v : undefined;
  };
  return Object.fromEntries((["encryptionsalt", "secretsprovider", "encryptedkey"] as const).flatMap((k) => (value(k) === undefined ? [] : [[k, value(k)!]])));
}

/**
 * The file's text with `encryptionsalt: <state>` as one more line at its end (after the comments
 * and the config they describe), every other byte as it was; and that line's number.
 */
export function withEncryptionSalt(text: string, state: string): { text: string; line: number } {
  const base = text === "" || text.endsWith("\n") ? text : `${text}\n`;
  return { text: `${base}encryptionsalt: ${state}\n`, line: base.split("\n").length };
}
