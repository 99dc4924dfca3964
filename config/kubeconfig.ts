// The kubeconfig as the Kubernetes provider reads it (client-go clientcmd loading rules): the files
// of $KUBECONFIG (a list; the first file to name a context or a cluster wins), else
// ~/.kube/config. Only what the cluster binding needs: which server a context points at.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parse } from "yaml";

interface NamedEntry {
  name?: unknown;
  context?: { cluster?: unknown };
  cluster?: { server?: unknown };
}

/** The kubeconfig files the provider reads: $KUBECONFIG's list, else ~/.kube/config. */
export function kubeconfigFiles(env: NodeJS.ProcessEnv = process.env): string[] {
  const list = (env.KUBECONFIG ?? "").split(path.delimiter).filter((f) => f !== "");
  return list.length > 0 ? list : [path.join(os.homedir(), ".kube", "config")];
}

/** A kubeconfig file's text, or undefined when there is no such file (the provider skips it too). */
function readKubeconfigFile(file: string): string | undefined {
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined;
}

/** The server of a context across kubeconfig files, the first file to name a context or cluster winning. */
export function serverOfContext(files: string[], context: string, read: (f: string) => string | undefined = readKubeconfigFile): string | undefined {
  const docs = files.flatMap((f) => {
    const text = read(f);
    if (text === undefined) return [];
    const doc = parse(text) as { contexts?: NamedEntry[]; clusters?: NamedEntry[] } | null;
    return doc && typeof doc === "object" ? [doc] : [];
  });
  const first = (key: "contexts" | "clusters", name: unknown) => {
    for (const d of docs) {
      const hit = (Array.isArray(d[key]) ? d[key] : []).find((e) => e?.name === name);
      if (hit) return hit;
    }
    return undefined;
  };
  const cluster = first("contexts", context)?.context?.cluster;
  if (cluster === undefined) return undefined;
  const server = first("clusters", cluster)?.cluster?.server;
  return typeof server === "string" ? server : undefined;
}
