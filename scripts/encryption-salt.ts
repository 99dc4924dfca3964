// npm run encryption-salt -- --stack <name> [--stacks-dir stacks]: adds the one line
// `encryptionsalt: v1:…` to stacks/Pulumi.<name>.yaml, made from $PULUMI_CONFIG_PASSPHRASE (or the
// file $PULUMI_CONFIG_PASSPHRASE_FILE names) exactly as the Pulumi CLI's passphrase secrets
// provider makes it, every other byte of the file as it was. Run it before `pulumi stack init` on a
// self-managed backend: the CLI then finds the salt and leaves the file as it is, where left to add
// the salt itself it writes the whole file anew (YAML aliases expanded, `openkeel:taints: false`
// quoted). A file that has a salt already is left alone when the passphrase opens it, refused when it
// does not; a stack of another secrets provider is refused. The salt is no secret: commit it.
// Exit 0: added, or already there; 2: bad usage, no passphrase, a wrong one, another provider.
//
// The command itself is pipeline/encryption-salt-command.ts, which the tests call in-process.
import { processIo, run } from "../cli/cli";
import { encryptionSaltCommand } from "../pipeline/encryption-salt-command";

run(() => encryptionSaltCommand(process.argv.slice(2), processIo));
