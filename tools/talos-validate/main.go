// talos-validate: judges a rendered talos/ folder (rendered/<stack>/talos/) with Talos' own
// machinery, offline. Per node of talos/machines.yaml: the machine config `talosctl gen config`
// generates for its machine type, its patches applied in order as `talosctl machineconfig patch`
// applies them, and the result validated as `talosctl validate --mode metal --strict` validates
// it. Every step is the machinery's code at the version go.mod pins (TALOS_VERSION), read at
// siderolabs/talos v1.13.9 (3ebd10a):
//
//   - generation: cmd/talosctl/cmd/mgmt/gen/config.go (GenerateConfigBundle → bundle.NewBundle →
//     generate.NewInput, then input.Config per machine type; the flag defaults of lines 430–436),
//     with the Kubernetes version the stack pins (--kubernetes-version, line 436);
//   - patching: cmd/talosctl/cmd/mgmt/machineconfig/patch.go lines 28–43 (the generated file's bytes,
//     configpatcher.LoadPatches, configpatcher.Apply);
//   - validation: cmd/talosctl/cmd/mgmt/validate.go lines 36–46 (runtime.ParseMode, WithLocal, and
//     WithStrict for --strict, then cfg.Validate), and what the machine itself asks of the
//     Kubernetes images at apply-config (imageProblems: a version the Talos release runs, 1.31.0 to
//     1.36.x for v1.13, pkg/machinery/compatibility/talos113/talos113.go:27-30).
//
// The secrets are generated in memory for each run (generate.NewInput makes a bundle when given
// none, pkg/machinery/config/generate/generate.go lines 83–90); no config is written or printed.
//
// Output: one line per node, then its problems indented; exit 0 when every node is valid, 1 when
// one is not, 2 for bad input (no machines.yaml, flags). `talos-validate config` makes the configs
// themselves, with their secrets (config.go).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/hashicorp/go-multierror"
	machineapi "github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/compatibility"
	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/configpatcher"
	"github.com/siderolabs/talos/pkg/machinery/config/encoder"
	"github.com/siderolabs/talos/pkg/machinery/config/generate"
	"github.com/siderolabs/talos/pkg/machinery/config/machine"
	"github.com/siderolabs/talos/pkg/machinery/config/types/v1alpha1"
	"github.com/siderolabs/talos/pkg/machinery/config/validation"
	"go.yaml.in/yaml/v4"
)

const machineryModule = "github.com/siderolabs/talos/pkg/machinery"

// sourceDigest is set at build time (-ldflags -X main.sourceDigest=…) to the digest of this
// module's files, so that the installer can tell a binary built from other sources.
var sourceDigest = "unset"

// metalMode is Talos' runtime.ModeMetal (internal/app/machined/pkg/runtime/mode.go lines 49–61 at
// v1.13.9), an internal package this module cannot import: "metal", requires install, no container.
type metalMode struct{}

func (metalMode) String() string        { return "metal" }
func (metalMode) RequiresInstall() bool { return true }
func (metalMode) InContainer() bool     { return false }

type machines struct {
	Machines map[string]struct {
		MachineType string   `yaml:"machineType"`
		Patches     []string `yaml:"patches"`
	} `yaml:"machines"`
}

type options struct {
	dir, clusterName, endpoint, kubernetesVersion, talosVersion string
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	// `talos-validate config …`: the nodes' machine configs themselves (config.go)
	if len(args) > 0 && args[0] == "config" {
		return runConfig(args[1:])
	}
	if len(args) > 0 && args[0] == "facts-example" {
		return factsExample(args[1:])
	}
	if len(args) > 0 && args[0] == "match-disks" {
		return matchDisks(args[1:])
	}
	fs := flag.NewFlagSet("talos-validate", flag.ContinueOnError)
	var o options
	fs.StringVar(&o.clusterName, "cluster-name", "", "the cluster name given to talosctl gen config")
	fs.StringVar(&o.endpoint, "endpoint", "", "the control-plane endpoint given to talosctl gen config (https://<host>:6443)")
	fs.StringVar(&o.kubernetesVersion, "kubernetes-version", "", "the Kubernetes version given to talosctl gen config (--kubernetes-version)")
	fs.StringVar(&o.talosVersion, "talos-version", "", "the Talos version the configs are for; must be the machinery's own")
	version := fs.Bool("version", false, "print the machinery version and the source digest, then exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	built := machineryVersion()
	if *version {
		fmt.Printf("talos-validate %s machinery %s\n", sourceDigest, built)
		return 0
	}
	if fs.NArg() != 1 || o.clusterName == "" || o.endpoint == "" || o.kubernetesVersion == "" || o.talosVersion == "" {
		fmt.Fprintln(os.Stderr, "usage: talos-validate -cluster-name <name> -endpoint <url> -kubernetes-version <X.Y.Z> -talos-version <vX.Y.Z> <rendered/<stack>/talos>")
		return 2
	}
	if o.talosVersion != built {
		fmt.Fprintf(os.Stderr, "talos-validate is built with machinery %s, asked for Talos %s. Fix: run `npm run tools`.\n", built, o.talosVersion)
		return 2
	}
	o.dir = fs.Arg(0)
	invalid, err := validateDir(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if invalid > 0 {
		return 1
	}
	return 0
}

func machineryVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == machineryModule {
				return d.Version
			}
		}
	}
	return "unknown"
}

// validateDir validates every node of dir/machines.yaml; the error is for input it cannot read.
func validateDir(o options) (int, error) {
	file := filepath.Join(o.dir, "machines.yaml")
	text, err := os.ReadFile(file)
	if err != nil {
		return 0, fmt.Errorf("%s: cannot be read (%v). Fix: run `npm run render`", file, err)
	}
	var m machines
	if err := yaml.Unmarshal(text, &m); err != nil || len(m.Machines) == 0 {
		return 0, fmt.Errorf("%s: is not a machines file with nodes (%v). Fix: run `npm run render`", file, err)
	}
	bases, err := generatedConfigs(o)
	if err != nil {
		return 0, err
	}
	talos, err := compatibility.ParseTalosVersion(&machineapi.VersionInfo{Tag: o.talosVersion})
	if err != nil {
		return 0, fmt.Errorf("-talos-version %s: %w", o.talosVersion, err)
	}
	names := make([]string, 0, len(m.Machines))
	for name := range m.Machines {
		names = append(names, name)
	}
	sort.Strings(names)
	invalid := 0
	for _, name := range names {
		node := m.Machines[name]
		base, ok := bases[node.MachineType]
		if !ok {
			return 0, fmt.Errorf("%s: machines.%s.machineType: %q is neither controlplane nor worker", file, name, node.MachineType)
		}
		problems := validateNode(o.dir, base, node.Patches, talos)
		head := fmt.Sprintf("%s (%s: %s)", name, node.MachineType, strings.Join(node.Patches, ", "))
		if len(problems) == 0 {
			fmt.Printf("%s: valid\n", head)
			continue
		}
		invalid++
		fmt.Printf("%s: %d problem(s)\n", head, len(problems))
		for _, p := range problems {
			// a decoding error spans lines (the YAML it could not read): its continuation indented
			fmt.Printf("  %s\n", strings.ReplaceAll(p, "\n", "\n    "))
		}
	}
	fmt.Printf("%d node(s), %d valid, %d invalid (Talos machinery %s, metal mode, strict)\n", len(names), len(names)-invalid, invalid, machineryVersion())
	return invalid, nil
}

// generatedConfigs: controlplane.yaml and worker.yaml as `talosctl gen config <name> <endpoint>
// --kubernetes-version <version>` writes them with its other flags' defaults (one secrets bundle, in memory).
func generatedConfigs(o options) (map[string][]byte, error) {
	contract, err := config.ParseContractFromVersion(o.talosVersion)
	if err != nil {
		return nil, fmt.Errorf("-talos-version %s: %w", o.talosVersion, err)
	}
	input, err := generate.NewInput(o.clusterName, o.endpoint, o.kubernetesVersion,
		generate.WithVersionContract(contract),
		generate.WithInstallDisk("/dev/sda"),
		generate.WithInstallImage("ghcr.io/siderolabs/installer:"+o.talosVersion),
		generate.WithDNSDomain("cluster.local"),
		generate.WithClusterDiscovery(true),
	)
	if err != nil {
		return nil, fmt.Errorf("talosctl gen config %s %s: %w", o.clusterName, o.endpoint, err)
	}
	out := map[string][]byte{}
	for _, t := range []machine.Type{machine.TypeControlPlane, machine.TypeWorker} {
		cfg, err := input.Config(t)
		if err != nil {
			return nil, fmt.Errorf("generating the %s config: %w", t, err)
		}
		// gen config writes the file with its documentation and examples (--with-docs, --with-examples default to true)
		if out[t.String()], err = cfg.EncodeBytes(encoder.WithComments(encoder.CommentsAll)); err != nil {
			return nil, fmt.Errorf("encoding the %s config: %w", t, err)
		}
	}
	return out, nil
}

// validateNode applies the node's patches to its base config and validates the result; each
// problem names the patch file or the document it is about.
func validateNode(dir string, base []byte, files []string, talos *compatibility.TalosVersion) []string {
	patches := make([]configpatcher.Patch, 0, len(files))
	origin := map[string][]string{} // document id → the patch files that hold it
	var problems []string
	for _, f := range files {
		text, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: cannot be read: %v", f, err))
			continue
		}
		p, err := configpatcher.LoadPatch(text)
		if err != nil {
			problems = append(problems, prefixed(f+": ", err)...)
			continue
		}
		if smp, ok := p.(configpatcher.StrategicMergePatch); ok {
			for _, id := range documentIDs(smp.Provider()) {
				origin[id] = append(origin[id], f)
			}
		}
		patches = append(patches, p)
	}
	if len(problems) > 0 {
		return problems
	}
	// one file at a time, so that a patch that cannot be applied is named
	in := configpatcher.WithBytes(base)
	for i, p := range patches {
		out, err := configpatcher.Apply(in, []configpatcher.Patch{p})
		if err != nil {
			return prefixed(files[i]+": cannot be applied: ", err)
		}
		in = out
	}
	cfg, err := in.Config()
	if err != nil {
		return prefixed("the patched config does not load: ", err)
	}
	warnings, err := cfg.Validate(metalMode{}, validation.WithLocal(), validation.WithStrict())
	for _, line := range prefixed("", err) {
		problems = append(problems, withOrigin(line, origin))
	}
	// WithStrict makes v1alpha1.Config's warnings errors; the other documents' warnings stay
	// warnings in the machinery (container.go lines 583–626): strict here means every one counts.
	for _, w := range warnings {
		problems = append(problems, withOrigin("warning: "+w, origin))
	}
	for _, p := range imageProblems(cfg, talos) {
		problems = append(problems, withOrigin(p, origin))
	}
	return problems
}

// imageProblems: what the machine asks of its Kubernetes images when the config is applied
// (RuntimeValidate, pkg/machinery/config/types/v1alpha1/v1alpha1_validation.go:1013-1042): the
// version of the kubelet's and, on the control plane, the API server's, controller manager's and
// scheduler's image, read by the machinery's KubernetesVersionFromImageRef, is one Talos runs. The
// machine asks its running Talos (ValidateKubernetesImageTag, lines 1049-1063); this, the Talos
// version the configs are for.
func imageProblems(cfg config.Provider, talos *compatibility.TalosVersion) []string {
	images := [][2]string{{"kubelet", cfg.Machine().Kubelet().Image()}}
	if cfg.Machine().Type().IsControlPlane() {
		images = append(images,
			[2]string{"kube-apiserver", cfg.Cluster().APIServer().Image()},
			[2]string{"kube-controller-manager", cfg.Cluster().ControllerManager().Image()},
			[2]string{"kube-scheduler", cfg.Cluster().Scheduler().Image()})
	}
	var problems []string
	for _, image := range images {
		k8s, err := v1alpha1.KubernetesVersionFromImageRef(image[1])
		if err == nil {
			err = k8s.SupportedWith(talos)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("v1alpha1.Config: %s image is not valid: %v", image[0], err))
		}
	}
	return problems
}

// documentIDs: the ids the container's errors use (container.go docID; v1alpha1.Config for the legacy document).
func documentIDs(p config.Provider) []string {
	var ids []string
	for _, d := range p.Documents() {
		id := d.Kind()
		if id == "v1alpha1" {
			id = "v1alpha1.Config"
		} else if named, ok := d.(interface{ Name() string }); ok {
			id += "/" + named.Name()
		}
		ids = append(ids, id)
	}
	return ids
}

func withOrigin(line string, origin map[string][]string) string {
	body := strings.TrimPrefix(line, "warning: ")
	id, _, found := strings.Cut(body, ": ")
	if !found {
		return line
	}
	where := "the generated config"
	if files, ok := origin[id]; ok {
		where = strings.Join(files, ", ")
	}
	first, rest, multiline := strings.Cut(line, "\n")
	if multiline {
		return fmt.Sprintf("%s [%s]\n%s", first, where, rest)
	}
	return fmt.Sprintf("%s [%s]", line, where)
}

// prefixed flattens the machinery's nested multierrors and errors.Join into one entry per error,
// each with the prefixes of the errors that wrap it ("v1alpha1.Config: …", "VLANConfig/x: …").
func prefixed(prefix string, err error) []string {
	if err == nil {
		return nil
	}
	var out []string
	var multi *multierror.Error
	if errors.As(err, &multi) && multi != err {
		if outer, ok := wrapperPrefix(err, multi); ok {
			return prefixed(prefix+outer, multi)
		}
	}
	switch e := err.(type) {
	case *multierror.Error:
		for _, inner := range e.Errors {
			out = append(out, prefixed(prefix, inner)...)
		}
		return out
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			out = append(out, prefixed(prefix, inner)...)
		}
		return out
	}
	if inner := errors.Unwrap(err); inner != nil {
		if outer, ok := wrapperPrefix(err, inner); ok {
			if _, joined := inner.(interface{ Unwrap() []error }); joined {
				return prefixed(prefix+outer, inner)
			}
		}
	}
	return []string{prefix + strings.TrimRight(err.Error(), "\n")}
}

// wrapperPrefix: what fmt.Errorf("<prefix>%w") put before inner.
func wrapperPrefix(err, inner error) (string, bool) {
	whole, rest := err.Error(), inner.Error()
	if strings.HasSuffix(whole, rest) {
		return strings.TrimSuffix(whole, rest), true
	}
	return "", false
}
