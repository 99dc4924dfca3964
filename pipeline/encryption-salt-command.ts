// `npm run encryption-salt` as a function of its arguments: the CLI (scripts/encryption-salt.ts)
// and the tests run the same code, the tests in-process with the output captured.
import * as fs from "node:fs";
import * as path from "node:path";
import { newEncryptionSalt, passphraseOpens, secretsKeys, withEncryptionSalt } from "../config/encryption-salt";
import { readStackRaw } from "../config/stack-file";
import { args, EXIT_BAD_CONFIG, UserError, type Io } from "../cli/cli";
import { writeWhole } from "../cli/write";

const SALT_OPTIONS = {
  stack: { type: "string" },
  "stacks-dir": { type: "string", default: "stacks" },
} as const;

/** Its usage (`--help`) is the CLI's header, also when the command runs in-process. */
const SALT_SCRIPT = path.resolve(__dirname, "../scripts/encryption-salt.ts");

const PASSPHRASE_FIX =
  "Fix: export PULUMI_CONFIG_PASSPHRASE=<the passphrase of the stack's backend, the deploy environment's secret> (or PULUMI_CONFIG_PASSPHRASE_FILE=<a file holding it>), then run this again";

/** The passphrase as the Pulumi CLI reads it: $PULUMI_CONFIG_PASSPHRASE, else the file $PULUMI_CONFIG_PASSPHRASE_FILE names, trimmed. */
export function passphraseOf(env: NodeJS.ProcessEnv): string {
  let phrase = env.PULUMI_CONFIG_PASSPHRASE;
  if (phrase === undefined && env.PULUMI_CONFIG_PASSPHRASE_FILE) {
    const file = env.PULUMI_CONFIG_PASSPHRASE_FILE;
    if (!fs.existsSync(file)) throw new UserError(`PULUMI_CONFIG_PASSPHRASE_FILE: ${file} does not exist. ${PASSPHRASE_FIX}`, EXIT_BAD_CONFIG);
    phrase = fs.readFileSync(file, "utf8").trim();
  }
  if (!phrase) {
    throw new UserError(
      `no passphrase: PULUMI_CONFIG_PASSPHRASE is ${phrase === "" ? "empty" : "unset"}${env.PULUMI_CONFIG_PASSPHRASE_FILE ? " and PULUMI_CONFIG_PASSPHRASE_FILE's file is empty" : ""}. ${PASSPHRASE_FIX}`,
      EXIT_BAD_CONFIG,
    );
  }
  return phrase;
}

/** `env`: where the passphrase is read (the process' environment for the CLI); `random`: the salt's bytes (tests). */
export function encryptionSaltCommand(argv: string[], io: Io, env: NodeJS.ProcessEnv = process.env, random?: (n: number) => Buffer): void {
  const opts = args(SALT_OPTIONS, argv, SALT_SCRIPT);
  if (!opts.stack) throw new UserError("--stack is required. Fix: npm run encryption-salt -- --stack <stack>", EXIT_BAD_CONFIG);
  const { file } = readStackRaw(opts.stack, opts["stacks-dir"]);
  const text = fs.readFileSync(file, "utf8");
  const keys = secretsKeys(text);
  const other = keys.secretsprovider ?? (keys.encryptedkey !== undefined ? "a cloud KMS (encryptedkey)" : undefined);
  if (other !== undefined && other !== "passphrase") {
    throw new UserError(
      `${file}: secretsprovider: the stack uses ${other}, whose key is not a passphrase's salt. Fix: nothing to add; pulumi stack init uses that provider (or remove secretsprovider and encryptedkey to use a passphrase)`,
      EXIT_BAD_CONFIG,
    );
  }
  const phrase = passphraseOf(env);
  if (keys.encryptionsalt !== undefined) {
    const opens = passphraseOpens(keys.encryptionsalt, phrase);
    if (opens) {
      io.out(`${file}: has its encryptionsalt already, and this passphrase opens it: nothing changed\n`);
      return;
    }
    throw new UserError(
      opens === undefined
        ? `${file}: encryptionsalt: is not a passphrase salt of the Pulumi CLI (v1:<salt>:v1:<nonce>:<sealed>). Fix: restore the line from git, or remove it and run this again for a stack that has no secrets yet`
        : `${file}: encryptionsalt: this passphrase does not open it (pulumi would stop: incorrect passphrase). Fix: use the passphrase the stack was made with (the deploy environment's PULUMI_CONFIG_PASSPHRASE)`,
      EXIT_BAD_CONFIG,
    );
  }
  const salted = withEncryptionSalt(text, newEncryptionSalt(phrase, random));
  writeWhole(file, salted.text);
  io.out(
    `${file}: added line ${salted.line}, encryptionsalt (Pulumi's passphrase check, no secret); every other line as it was. Commit it; pulumi stack init ${opts.stack} then leaves the file as it is\n`,
  );
}
