package config

import (
	"fmt"
	"reflect"
	"time"

	"pidb/bench/workloads"
	"pidb/inventory"
)

// Resolved is a host's settings as a command takes them before its
// flags: every key of [bench], [thermal] and [validate] with its value,
// and where each came from, as ansible-inventory --host shows a host.
type Resolved struct {
	Bench    map[string]any `json:"bench"`
	Thermal  map[string]any `json:"thermal"`
	Validate map[string]any `json:"validate"`
	// From is where each value came from, by "section.key": the
	// inventory's "FILE:LINE", or "default"
	From map[string]string `json:"from"`
}

// Resolve is h's settings in inv, for kind's command (validate idles
// around its load, bench does not). A duration is written as the
// inventory writes one ("5m0s"); the workload "" is the engine's own.
func Resolve(inv *inventory.Inventory, h inventory.Host, kind Kind) (Resolved, error) {
	b, err := BenchFor(h, nil)
	if err != nil {
		return Resolved{}, err
	}
	t, err := ThermalFor(inv, kind, nil)
	if err != nil {
		return Resolved{}, err
	}
	v, err := ValidateFor(inv, nil)
	if err != nil {
		return Resolved{}, err
	}
	r := Resolved{Bench: map[string]any{}, Thermal: map[string]any{}, Validate: map[string]any{}, From: map[string]string{}}
	sections := map[Section]struct {
		values map[string]any
		inv    inventory.Section
	}{BenchSection: {r.Bench, h.Bench}, ThermalSection: {r.Thermal, inv.Thermal}, ValidateSection: {r.Validate, inv.Validate}}
	// the workload's own defaults, where the inventory leaves them to it
	spec := workloads.Default(h.Engine)
	if b.Workload != "" {
		if spec, err = workloads.Get(b.Workload); err != nil {
			return Resolved{}, err
		}
	}
	params, _ := spec.Resolve(workloads.Params{Scale: b.Scale, Tables: b.Tables, TableSize: b.TableSize, Protocol: b.Protocol})
	workloadOwn := map[string]any{"scale": params.Scale, "tables": params.Tables, "table_size": params.TableSize, "protocol": string(params.Protocol)}
	workloadOwn["mix"], workloadOwn["queries"] = 0, 0 // none, unless the workload has one
	if spec.HasMix {
		workloadOwn["mix"] = tpccMix(b.Mix)
	}
	if spec.FixedWork {
		delete(workloadOwn, "queries") // the inventory's, or a timed run
	}
	tg := &targets{bench: &b, thermal: &t, validate: &v}
	for _, k := range Keys() {
		if k.FlagOnly {
			continue
		}
		s := sections[k.Section]
		val := reflect.ValueOf(k.field(tg)).Elem().Interface()
		if d, ok := val.(time.Duration); ok {
			val = d.String()
		}
		from := "default"
		if x, ok := s.inv[k.Name]; ok {
			from = fmt.Sprintf("%s:%d", inv.Path, x.Line)
		}
		if k.Name == "workload" && val == "" {
			val, from = spec.Name, "the engine's default"
		}
		if own, ok := workloadOwn[k.Name]; ok && from == "default" && k.Section == BenchSection {
			val, from = own, "the workload's default"
			if own == 0 {
				val, from = nil, spec.Name+" has none"
			}
		}
		if from == "default" && k.Default != "" && val != nil && reflect.ValueOf(val).IsZero() {
			from = k.Default // "a timed run"
		}
		s.values[k.Name] = valueOf(val)
		r.From[string(k.Section)+"."+k.Name] = from
	}
	return r, nil
}

// valueOf is a setting's value as JSON writes it: its own type's kind
// (a Via is a string).
func valueOf(v any) any {
	switch x := reflect.ValueOf(v); x.Kind() {
	case reflect.String:
		return x.String()
	case reflect.Int:
		return int(x.Int())
	}
	return v
}

// tpccMix is a mix as the inventory writes it, the standard's for "".
func tpccMix(s string) string {
	m, err := workloads.ParseMix(s)
	if err != nil {
		return s
	}
	return m.String()
}
