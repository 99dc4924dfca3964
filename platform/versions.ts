// Every version this repository deploys, in one place (Renovate-friendly). Exact versions only:
// no `latest`, no ranges, no floating tags. The Plan invariants reject an unpinned chart or URL.

/** A Helm chart: a Helm repository (https://…) or an OCI registry (oci://…), chart and version. */
export interface ChartPin {
  repository: string;
  chart: string;
  version: string;
}

// ---- Platform components (Longhorn, KubeVirt, CDI, Kube-OVN, Multus, Medik8s, …) ----

// ---- OpenKeel charts ----

// ---- Build tools (installed into .tools/ by `npm run tools`; never deployed) ----
// CI's runtimes (Node, Go, the Pulumi CLI) and its GitHub Actions are pinned in
// .github/workflows/pull-request.yml, which cannot read this file; a test keeps its Pulumi CLI equal
// to the @pulumi/pulumi SDK of package.json.

/** A Go command-line tool: `go install <command>@<version>`, or its release archive where Go is missing. */
export interface ToolPin {
  /** The Go module whose version the binary's build info carries. */
  module: string;
  /** The package `go install` builds (the module's command). */
  command: string;
  version: string;
  /** Argument that makes the binary print its version (release builds print the pinned tag). */
  versionFlag: string;
  /**
   * Release archives by `<process.platform>-<process.arch>`: a .tar.gz holding the binary at its top
   * level, and the archive's SHA-256 (from the release's checksum file).
   */
  releases: Record<string, { url: string; sha256: string }>;
}

/** The Kubernetes version the kubeconform schemas describe (the offline mirror has v1.32.2 strict). */
export const KUBERNETES_SCHEMA_VERSION = "1.32.2";

export const TOOLS = {
  kubeconform: {
    module: "github.com/yannh/kubeconform",
    command: "github.com/yannh/kubeconform/cmd/kubeconform",
    version: "v0.7.0",
    versionFlag: "-v",
    releases: {
      "linux-x64": {
        url: "https://github.com/yannh/kubeconform/releases/download/v0.7.0/kubeconform-linux-amd64.tar.gz",
        sha256: "c31518ddd122663b3f3aa874cfe8178cb0988de944f29c74a0b9260920d115d3",
      },
      "linux-arm64": {
        url: "https://github.com/yannh/kubeconform/releases/download/v0.7.0/kubeconform-linux-arm64.tar.gz",
        sha256: "cc907ccf9e3c34523f0f32b69745265e0a6908ca85b92f41931d4537860eb83c",
      },
      "darwin-x64": {
        url: "https://github.com/yannh/kubeconform/releases/download/v0.7.0/kubeconform-darwin-amd64.tar.gz",
        sha256: "c6771cc894d82e1b12f35ee797dcda1f7da6a3787aa30902a15c264056dd40d4",
      },
      "darwin-arm64": {
        url: "https://github.com/yannh/kubeconform/releases/download/v0.7.0/kubeconform-darwin-arm64.tar.gz",
        sha256: "b5d32b2cb77f9c781c976b20a85e2d0bc8f9184d5d1cfe665a2f31a19f99eeb9",
      },
    },
  },
  actionlint: {
    module: "github.com/rhysd/actionlint",
    command: "github.com/rhysd/actionlint/cmd/actionlint",
    version: "v1.7.12",
    versionFlag: "-version",
    releases: {
      "linux-x64": {
        url: "https://github.com/rhysd/actionlint/releases/download/v1.7.12/actionlint_1.7.12_linux_amd64.tar.gz",
        sha256: "8aca8db96f1b94770f1b0d72b6dddcb1ebb8123cb3712530b08cc387b349a3d8",
      },
      "linux-arm64": {
        url: "https://github.com/rhysd/actionlint/releases/download/v1.7.12/actionlint_1.7.12_linux_arm64.tar.gz",
        sha256: "325e971b6ba9bfa504672e29be93c24981eeb1c07576d730e9f7c8805afff0c6",
      },
      "darwin-x64": {
        url: "https://github.com/rhysd/actionlint/releases/download/v1.7.12/actionlint_1.7.12_darwin_amd64.tar.gz",
        sha256: "5b44c3bc2255115c9b69e30efc0fecdf498fdb63c5d58e17084fd5f16324c644",
      },
      "darwin-arm64": {
        url: "https://github.com/rhysd/actionlint/releases/download/v1.7.12/actionlint_1.7.12_darwin_arm64.tar.gz",
        sha256: "aba9ced2dee8d27fecca3dc7feb1a7f9a52caefa1eb46f3271ea66b6e0e6953f",
      },
    },
  },
} as const satisfies Record<string, ToolPin>;

export type ToolName = keyof typeof TOOLS;
