// `talos-validate config`: each node's full machine configuration, as an operator makes it with
// talosctl, for `npm run talos-config` (tools/talos-config-command.ts), which writes the files.
// Every step is the machinery's code at the version go.mod pins, read at siderolabs/talos v1.13.9:
//
//   - the secrets: `talosctl gen secrets` (cmd/talosctl/cmd/mgmt/gen/secrets.go lines 60–62 and 73:
//     secrets.NewBundle with a fixed clock, yaml.Marshal of the bundle), or the bundle of an earlier
//     run loaded and validated as `gen config --with-secrets` does (config.go lines 213–225);
//   - the base configs: `talosctl gen config <name> <endpoint> --with-secrets … --kubernetes-version …`
//     with its other flags at their defaults (config.go lines 228–257 and 430–445: GenerateConfigBundle
//     → bundle.NewBundle, serialized with docs and examples), and its talosconfig, whose endpoints
//     are the control-plane addresses given here (what `talosctl config endpoint` would set);
//   - each node: `talosctl machineconfig patch <base> --patch @<group> --patch @<node>`
//     (cmd/talosctl/cmd/mgmt/machineconfig/patch.go lines 28–47: every patch in one Apply, Bytes);
//   - its check: `talosctl validate --mode metal --strict --config <that file>` (validate.go lines
//     31–46: configloader.NewFromFile's bytes, WithLocal, WithStrict), every warning counted, and
//     what the machine asks of its Kubernetes images at apply-config (imageProblems, main.go).
//
// Output: one JSON object on stdout (the secrets only when generated here; a node's config only
// when valid); exit 0 when every node is valid, 1 when one is not, 2 for bad input (on stderr).
// Nothing is written to a file: the secrets never touch a disk here.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	machineapi "github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/compatibility"
	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/bundle"
	"github.com/siderolabs/talos/pkg/machinery/config/configloader"
	"github.com/siderolabs/talos/pkg/machinery/config/configpatcher"
	"github.com/siderolabs/talos/pkg/machinery/config/encoder"
	"github.com/siderolabs/talos/pkg/machinery/config/generate"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
	"github.com/siderolabs/talos/pkg/machinery/config/machine"
	"github.com/siderolabs/talos/pkg/machinery/config/validation"
	"go.yaml.in/yaml/v4"
)

type configOptions struct {
	options
	secretsFile    string
	talosEndpoints []string
}

type nodeConfig struct {
	Node        string   `json:"node"`
	MachineType string   `json:"machineType"`
	Patches     []string `json:"patches"`
	Config      string   `json:"config,omitempty"`
	Problems    []string `json:"problems"`
}

type configOutput struct {
	Secrets     string       `json:"secrets,omitempty"`
	Talosconfig string       `json:"talosconfig"`
	Nodes       []nodeConfig `json:"nodes"`
}

func runConfig(args []string) int {
	fs := flag.NewFlagSet("talos-validate config", flag.ContinueOnError)
	var o configOptions
	var endpoints string
	fs.StringVar(&o.clusterName, "cluster-name", "", "the cluster name given to talosctl gen config")
	fs.StringVar(&o.endpoint, "endpoint", "", "the control-plane endpoint given to talosctl gen config (https://<host>:6443)")
	fs.StringVar(&o.talosVersion, "talos-version", "", "the Talos version the configs are for; must be the machinery's own")
	fs.StringVar(&o.kubernetesVersion, "kubernetes-version", "", "talosctl gen config --kubernetes-version")
	fs.StringVar(&o.secretsFile, "secrets", "", "the secrets bundle of an earlier run (talosctl gen config --with-secrets); none: a new one")
	fs.StringVar(&endpoints, "talos-endpoints", "", "the talosconfig's endpoints, comma-separated (the control-plane nodes' addresses)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || o.clusterName == "" || o.endpoint == "" || o.talosVersion == "" || o.kubernetesVersion == "" {
		fmt.Fprintln(os.Stderr, "usage: talos-validate config -cluster-name <name> -endpoint <url> -talos-version <vX.Y.Z> -kubernetes-version <X.Y.Z> [-secrets <file>] [-talos-endpoints <a,b>] <rendered/<stack>/talos>")
		return 2
	}
	if built := machineryVersion(); o.talosVersion != built {
		fmt.Fprintf(os.Stderr, "talos-validate is built with machinery %s, asked for Talos %s. Fix: run `npm run tools`.\n", built, o.talosVersion)
		return 2
	}
	if endpoints != "" {
		o.talosEndpoints = strings.Split(endpoints, ",")
	}
	o.dir = fs.Arg(0)
	out, err := nodeConfigs(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	for _, n := range out.Nodes {
		if len(n.Problems) > 0 {
			return 1
		}
	}
	return 0
}

// nodeConfigs: the secrets (new or loaded), the base configs and talosconfig, then each node.
func nodeConfigs(o configOptions) (configOutput, error) {
	var out configOutput
	file := filepath.Join(o.dir, "machines.yaml")
	text, err := os.ReadFile(file)
	if err != nil {
		return out, fmt.Errorf("%s: cannot be read (%v). Fix: run `npm run render`", file, err)
	}
	var m machines
	if err := yaml.Unmarshal(text, &m); err != nil || len(m.Machines) == 0 {
		return out, fmt.Errorf("%s: is not a machines file with nodes (%v). Fix: run `npm run render`", file, err)
	}
	contract, err := config.ParseContractFromVersion(o.talosVersion)
	if err != nil {
		return out, fmt.Errorf("-talos-version %s: %w", o.talosVersion, err)
	}
	talos, err := compatibility.ParseTalosVersion(&machineapi.VersionInfo{Tag: o.talosVersion})
	if err != nil {
		return out, fmt.Errorf("-talos-version %s: %w", o.talosVersion, err)
	}
	bundleSecrets, generated, err := secretsBundle(o.secretsFile, contract)
	if err != nil {
		return out, err
	}
	if generated {
		text, err := yaml.Marshal(bundleSecrets)
		if err != nil {
			return out, fmt.Errorf("encoding the secrets bundle: %w", err)
		}
		out.Secrets = string(text)
	}
	configs, err := bundle.NewBundle(bundle.WithVerbose(false), bundle.WithInputOptions(&bundle.InputOptions{
		ClusterName: o.clusterName,
		Endpoint:    o.endpoint,
		KubeVersion: strings.TrimPrefix(o.kubernetesVersion, "v"),
		GenOptions: []generate.Option{
			generate.WithSecretsBundle(bundleSecrets),
			// gen config's flag defaults (config.go lines 430–445)
			generate.WithInstallDisk("/dev/sda"),
			generate.WithInstallImage("ghcr.io/siderolabs/installer:" + o.talosVersion),
			generate.WithAdditionalSubjectAltNames([]string{}),
			generate.WithDNSDomain("cluster.local"),
			generate.WithClusterDiscovery(true),
			generate.WithEndpointList(o.talosEndpoints),
		},
	}))
	if err != nil {
		return out, fmt.Errorf("talosctl gen config %s %s: %w", o.clusterName, o.endpoint, err)
	}
	talosconfig, err := yaml.Marshal(configs.TalosConfig())
	if err != nil {
		return out, fmt.Errorf("encoding the talosconfig: %w", err)
	}
	out.Talosconfig = string(talosconfig)
	bases := map[string][]byte{}
	for _, t := range []machine.Type{machine.TypeControlPlane, machine.TypeWorker} {
		if bases[t.String()], err = configs.Serialize(encoder.CommentsDocs|encoder.CommentsExamples, t); err != nil {
			return out, fmt.Errorf("encoding the %s config: %w", t, err)
		}
	}
	names := make([]string, 0, len(m.Machines))
	for name := range m.Machines {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		node := m.Machines[name]
		base, ok := bases[node.MachineType]
		if !ok {
			return out, fmt.Errorf("%s: machines.%s.machineType: %q is neither controlplane nor worker", file, name, node.MachineType)
		}
		config, problems := patchedConfig(o.dir, base, node.Patches, talos)
		if problems == nil {
			problems = []string{}
		}
		out.Nodes = append(out.Nodes, nodeConfig{Node: name, MachineType: node.MachineType, Patches: node.Patches, Config: config, Problems: problems})
	}
	return out, nil
}

// secretsBundle: the bundle of secretsFile, validated, or a new one (and true).
func secretsBundle(secretsFile string, contract *config.VersionContract) (*secrets.Bundle, bool, error) {
	if secretsFile == "" {
		b, err := secrets.NewBundle(secrets.NewFixedClock(time.Now()), contract)
		if err != nil {
			return nil, false, fmt.Errorf("talosctl gen secrets: %w", err)
		}
		return b, true, nil
	}
	b, err := secrets.LoadBundle(secretsFile)
	if err == nil {
		err = b.Validate()
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s: not a Talos secrets bundle (%v). Fix: restore the secrets.yaml this cluster was made with, or, for a cluster not installed yet, remove the file to generate new ones", secretsFile, err)
	}
	return b, false, nil
}

// patchedConfig: the base with the node's patches, as `machineconfig patch` writes it, and its
// problems as `validate --mode metal --strict` finds them (the config only when there are none).
func patchedConfig(dir string, base []byte, files []string, talos *compatibility.TalosVersion) (string, []string) {
	patches := make([]configpatcher.Patch, 0, len(files))
	for _, f := range files {
		text, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			// validateNode names the file and the document of every problem
			return "", validateNode(dir, base, files, talos)
		}
		p, err := configpatcher.LoadPatch(text)
		if err != nil {
			return "", validateNode(dir, base, files, talos)
		}
		patches = append(patches, p)
	}
	patched, err := configpatcher.Apply(configpatcher.WithBytes(base), patches)
	if err != nil {
		return "", validateNode(dir, base, files, talos)
	}
	text, err := patched.Bytes()
	if err != nil {
		return "", prefixed("the patched config cannot be encoded: ", err)
	}
	cfg, err := configloader.NewFromBytes(text)
	if err != nil {
		return "", prefixed("the patched config does not load: ", err)
	}
	warnings, err := cfg.Validate(metalMode{}, validation.WithLocal(), validation.WithStrict())
	problems := prefixed("", err)
	for _, w := range warnings {
		problems = append(problems, "warning: "+w)
	}
	problems = append(problems, imageProblems(cfg, talos)...)
	if len(problems) > 0 {
		// the same checks again, one patch at a time, to name where each problem comes from
		if named := validateNode(dir, base, files, talos); len(named) > 0 {
			return "", named
		}
		return "", problems
	}
	return string(text), nil
}
