// The hardware facts of a machine, with Talos' own resource types at the pinned machinery:
//
//   - `facts-example <machine.yaml>` prints a machine's resources exactly as `talosctl get <type>
//     --insecure -o yaml` prints them (cmd/talosctl/cmd/talos/output/yaml.go WriteResource at
//     v1.13.9: `node: <node>`, then resource.MarshalYAML encoded by go.yaml.in/yaml/v4, a `---`
//     between resources and between the commands' outputs). With --insecure the node is empty:
//     the maintenance client dials the address as its endpoint and sends no `nodes` metadata
//     (cmd/talosctl/pkg/talos/global/client.go:133-166), so ForEachResource passes ""
//     (cmd/talosctl/pkg/talos/helpers/resources.go:43-47). The specs are decoded strictly into
//     block.DiskSpec, network.LinkStatusSpec, hardware.ProcessorSpec and
//     hardware.SystemInformationSpec, so a field Talos does not have is refused. The repository's
//     facts fixtures are made with it (test/fixtures/talos-facts/).
//   - `match-disks <facts.yaml> <query.yaml>` answers which disks of a facts file Talos takes: each
//     install disk selector (query `installs`) through InstallConfig.DiskMatchExpression and
//     blockhelpers.MatchDisks over an in-memory COSI state (what the install task runs,
//     internal/app/machined/pkg/runtime/v1alpha1/v1alpha1_sequencer_tasks.go:1517-1538), and
//     each volume selector through celenv.DiskLocator with system_disk false and true (what the
//     volume manager evaluates, internal/app/machined/pkg/controllers/block/internal/volumes/
//     volumes.go:64-83). The oracle of nodes/disk-selectors.ts.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/cosi-project/runtime/pkg/resource"
	"github.com/cosi-project/runtime/pkg/state"
	"github.com/cosi-project/runtime/pkg/state/impl/inmem"
	"github.com/cosi-project/runtime/pkg/state/impl/namespaced"
	blockpb "github.com/siderolabs/talos/pkg/machinery/api/resource/definitions/block"
	"github.com/siderolabs/talos/pkg/machinery/cel"
	"github.com/siderolabs/talos/pkg/machinery/cel/celenv"
	"github.com/siderolabs/talos/pkg/machinery/config/types/block/blockhelpers"
	"github.com/siderolabs/talos/pkg/machinery/config/types/v1alpha1"
	"github.com/siderolabs/talos/pkg/machinery/proto"
	"github.com/siderolabs/talos/pkg/machinery/resources/block"
	"github.com/siderolabs/talos/pkg/machinery/resources/hardware"
	"github.com/siderolabs/talos/pkg/machinery/resources/network"
	"go.yaml.in/yaml/v4"
)

type exampleEntry struct {
	ID   string    `yaml:"id"`
	Spec yaml.Node `yaml:"spec"`
}

type exampleMachine struct {
	System yaml.Node      `yaml:"system"`
	CPUs   []exampleEntry `yaml:"cpus"`
	Disks  []exampleEntry `yaml:"disks"`
	Links  []exampleEntry `yaml:"links"`
}

// decodeStrict decodes a YAML node into a Talos spec, refusing fields the spec does not have.
func decodeStrict(n *yaml.Node, into any) error {
	text, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(text))
	dec.KnownFields(true)
	if err := dec.Decode(into); err != nil && err != io.EOF {
		return err
	}
	return nil
}

// a fixed time: the fixtures are committed, and Talos' own times would differ per capture
var exampleTime = time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)

func withMeta(r resource.Resource, owner string) resource.Resource {
	md := r.Metadata()
	md.SetVersion(md.Version().Next())
	md.SetPhase(resource.PhaseRunning)
	md.SetCreated(exampleTime)
	md.SetUpdated(exampleTime)
	_ = md.SetOwner(owner)
	return r
}

func exampleResources(m exampleMachine) ([][]resource.Resource, error) {
	sys := hardware.NewSystemInformation(hardware.SystemInformationID)
	if err := decodeStrict(&m.System, sys.TypedSpec()); err != nil {
		return nil, fmt.Errorf("system: %w", err)
	}
	out := [][]resource.Resource{{withMeta(sys, "hardware.SystemInfoController")}, nil, nil, nil}
	for _, c := range m.CPUs {
		r := hardware.NewProcessorInfo(c.ID)
		if err := decodeStrict(&c.Spec, r.TypedSpec()); err != nil {
			return nil, fmt.Errorf("cpus[%s]: %w", c.ID, err)
		}
		out[1] = append(out[1], withMeta(r, "hardware.SystemInfoController"))
	}
	for _, d := range m.Disks {
		r := block.NewDisk(block.NamespaceName, d.ID)
		if err := decodeStrict(&d.Spec, r.TypedSpec()); err != nil {
			return nil, fmt.Errorf("disks[%s]: %w", d.ID, err)
		}
		out[2] = append(out[2], withMeta(r, "block.DisksController"))
	}
	for _, l := range m.Links {
		r := network.NewLinkStatus(network.NamespaceName, l.ID)
		if err := decodeStrict(&l.Spec, r.TypedSpec()); err != nil {
			return nil, fmt.Errorf("links[%s]: %w", l.ID, err)
		}
		out[3] = append(out[3], withMeta(r, "network.LinkStatusController"))
	}
	return out, nil
}

// writeLikeTalosctl is output/yaml.go's WriteResource for each resource, one `---` between resources.
func writeLikeTalosctl(w io.Writer, node string, groups [][]resource.Resource) error {
	first := true
	for _, group := range groups {
		for _, r := range group {
			out, err := resource.MarshalYAML(r)
			if err != nil {
				return err
			}
			if !first {
				fmt.Fprintln(w, "---")
			}
			first = false
			fmt.Fprintf(w, "node: %s\n", node)
			if err := yaml.NewEncoder(w).Encode(out); err != nil {
				return err
			}
		}
	}
	return nil
}

func factsExample(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: talos-validate facts-example <machine.yaml>")
		return 2
	}
	text, err := os.ReadFile(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var m exampleMachine
	if err := yaml.Unmarshal(text, &m); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", args[0], err)
		return 2
	}
	groups, err := exampleResources(m)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", args[0], err)
		return 1
	}
	// the maintenance client's node: none (see the header)
	if err := writeLikeTalosctl(os.Stdout, "", groups); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

type diskQuery struct {
	Installs []*v1alpha1.InstallDiskSelector `yaml:"installs"`
	Volumes  []string                        `yaml:"volumes"`
}

type volumeAnswer struct {
	Expression string `json:"expression"`
	Error      string `json:"error,omitempty"`
	// per disk id: [system_disk false, system_disk true]
	Matches map[string][2]bool `json:"matches"`
}

type installAnswer struct {
	Disks []string `json:"disks"`
	Error string   `json:"error,omitempty"`
}

type diskAnswer struct {
	Installs []installAnswer `json:"installs"`
	Volumes  []volumeAnswer  `json:"volumes"`
}

// factsDisks reads the Disk documents of a facts file into Talos' Disk resources, sorted by id.
func factsDisks(text []byte) ([]*block.Disk, error) {
	var disks []*block.Disk
	dec := yaml.NewDecoder(bytes.NewReader(text))
	for {
		var doc struct {
			Metadata struct {
				Type string `yaml:"type"`
				ID   string `yaml:"id"`
			} `yaml:"metadata"`
			Spec yaml.Node `yaml:"spec"`
		}
		if err := dec.Decode(&doc); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		if doc.Metadata.Type != string(block.DiskType) {
			continue
		}
		d := block.NewDisk(block.NamespaceName, doc.Metadata.ID)
		if err := decodeStrict(&doc.Spec, d.TypedSpec()); err != nil {
			return nil, fmt.Errorf("disk %s: %w", doc.Metadata.ID, err)
		}
		disks = append(disks, d)
	}
	sort.Slice(disks, func(i, j int) bool { return disks[i].Metadata().ID() < disks[j].Metadata().ID() })
	return disks, nil
}

func matchInstall(ctx context.Context, sel *v1alpha1.InstallDiskSelector, disks []*block.Disk) ([]string, error) {
	expr, err := (&v1alpha1.InstallConfig{InstallDiskSelector: sel}).DiskMatchExpression()
	if err != nil || expr == nil {
		return nil, err
	}
	st := state.WrapCore(namespaced.NewState(inmem.Build))
	for _, d := range disks {
		if err := st.Create(ctx, d); err != nil {
			return nil, err
		}
	}
	matched, err := blockhelpers.MatchDisks(ctx, st, expr)
	if err != nil {
		return nil, err
	}
	ids := []string{}
	for _, d := range matched {
		ids = append(ids, d.Metadata().ID())
	}
	return ids, nil
}

func matchVolume(source string, disks []*block.Disk) volumeAnswer {
	a := volumeAnswer{Expression: source, Matches: map[string][2]bool{}}
	expr, err := cel.ParseBooleanExpression(source, celenv.DiskLocator())
	if err != nil {
		a.Error = err.Error()
		return a
	}
	for _, d := range disks {
		spec := &blockpb.DiskSpec{}
		if err := proto.ResourceSpecToProto(d, spec); err != nil {
			a.Error = err.Error()
			return a
		}
		var m [2]bool
		for i, system := range []bool{false, true} {
			if m[i], err = expr.EvalBool(celenv.DiskLocator(), map[string]any{"disk": spec, "system_disk": system}); err != nil {
				a.Error = err.Error()
				return a
			}
		}
		a.Matches[d.Metadata().ID()] = m
	}
	return a
}

func matchDisks(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: talos-validate match-disks <facts.yaml> <query.yaml>")
		return 2
	}
	facts, err := os.ReadFile(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	disks, err := factsDisks(facts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", args[0], err)
		return 2
	}
	text, err := os.ReadFile(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var q diskQuery
	if err := yaml.Unmarshal(text, &q); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", args[1], err)
		return 2
	}
	answer := diskAnswer{Installs: []installAnswer{}, Volumes: []volumeAnswer{}}
	for _, sel := range q.Installs {
		a := installAnswer{Disks: []string{}}
		if ids, err := matchInstall(context.Background(), sel, disks); err != nil {
			a.Error = err.Error()
		} else if ids != nil {
			a.Disks = ids
		}
		answer.Installs = append(answer.Installs, a)
	}
	for _, v := range q.Volumes {
		answer.Volumes = append(answer.Volumes, matchVolume(v, disks))
	}
	if err := json.NewEncoder(os.Stdout).Encode(answer); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
