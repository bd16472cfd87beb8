package tables

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"pidb/action"
	"pidb/dbms"
	"pidb/demo"
	"pidb/inventory"
	"pidb/lab"
)

// hostView is a resolved host as `inventory check --json` prints it.
type hostView struct {
	Host         string      `json:"host"`
	Address      string      `json:"address"`
	Port         int         `json:"port"`
	User         string      `json:"user"`
	IdentityFile string      `json:"identity_file"`
	KnownHosts   string      `json:"known_hosts"`
	Engine       dbms.Family `json:"engine"`
	Preset       string      `json:"preset"`
	Storage      string      `json:"storage"`
	Connections  *int        `json:"max_connections"` // null: scaled to RAM
	AllowFrom    []string    `json:"allow_from"`
	AllowPublic  bool        `json:"allow_public"` // allow_from may reach beyond the private ranges
	TLS          bool        `json:"tls"`          // logins from allow_from must use TLS
	// DataDevice is the drive the data moves to ("auto" or a device);
	// null: it stays where it is
	DataDevice     *string        `json:"data_device"`
	DataDeviceWipe bool           `json:"data_device_wipe"`
	OSGovernor     string         `json:"os_governor"` // the CPU governor the os step sets
	OSJournal      string         `json:"os_journal"`  // where the journal keeps its logs
	Settings       map[string]any `json:"settings"`
	Databases      []databaseView `json:"databases"`
	Bench          map[string]any `json:"bench"`
	Thermal        map[string]any `json:"thermal"`
	Validate       map[string]any `json:"validate"`
	Cluster        *clusterView   `json:"cluster"` // null: on its own
	// From is where each value came from: "FILE:LINE", or a default
	From map[string]string `json:"from"`
	Line int               `json:"line"`
}

// clusterView is a host's part in its [[cluster]].
type clusterView struct {
	Name string         `json:"name"`
	Role inventory.Role `json:"role"` // primary or replica
}

// clusterOf is the host's part in its cluster; nil on its own.
func clusterOf(h inventory.Host) *clusterView {
	if h.Cluster == nil {
		return nil
	}
	v := &clusterView{Name: h.Cluster.Name, Role: inventory.Replica}
	if h.Cluster.Primary == h.Name {
		v.Role = inventory.Primary
	}
	return v
}

type databaseView struct {
	Name  string `json:"name"`
	Owner string `json:"owner"`
	Adopt bool   `json:"adopt"` // take over an owner pidb did not make
}

// storageOf is the host's storage as the table and the JSON both say it:
// the drive its data moves to ("drive /dev/sda", "drive auto"), which
// the tuner tunes for, else the inventory's, or "detect" (facts find it
// on the host).
func storageOf(h inventory.Host) string {
	switch {
	case h.DataDevice != "":
		return "drive " + h.DataDevice
	case h.Storage == "":
		return "detect"
	}
	return h.Storage
}

// HostsJSON is `pidb inventory check --json`: each resolved host, with
// every value a command would take before its flags and where it came
// from, as ansible-inventory --host shows a host.
func HostsJSON(checked []action.CheckedHost) []hostView {
	views := make([]hostView, 0, len(checked))
	for _, c := range checked {
		h := c.Host
		v := hostView{
			Host: h.Name, Address: h.Address, Port: h.Port, User: h.User,
			IdentityFile: h.IdentityFile, KnownHosts: h.KnownHosts,
			Engine: h.Engine, Preset: h.Preset, Storage: storageOf(h),
			AllowFrom: allowStrings(h), AllowPublic: h.AllowPublic, TLS: h.TLS, Settings: raw(h.Settings),
			DataDeviceWipe: h.DataDevice != "" && h.DataDeviceWipe, OSGovernor: cmp.Or(h.OSGovernor, "performance"), OSJournal: cmp.Or(h.OSJournal, "persistent"),
			Bench: c.Settings.Bench, Thermal: c.Settings.Thermal, Validate: c.Settings.Validate, From: c.Settings.From,
			Databases: []databaseView{}, Line: h.Line, Cluster: clusterOf(h),
		}
		if h.Connections > 0 {
			v.Connections = &h.Connections
		}
		if h.DataDevice != "" {
			v.DataDevice = &h.DataDevice
		}
		for _, d := range h.Databases {
			v.Databases = append(v.Databases, databaseView{Name: d.Name, Owner: d.Owner, Adopt: d.Adopt})
		}
		views = append(views, v)
	}
	return views
}

func raw(s inventory.Section) map[string]any {
	m := make(map[string]any, len(s))
	for k, v := range s {
		m[k] = v.Raw
	}
	return m
}

func allowStrings(h inventory.Host) []string {
	out := make([]string, 0, len(h.AllowFrom))
	for _, p := range h.AllowFrom {
		out = append(out, p.String())
	}
	return out
}

// Hosts is `pidb inventory check`'s table: each resolved host.
func Hosts(checked []action.CheckedHost) Table {
	t := Table{Header: []string{"HOST", "ADDRESS", "USER", "ENGINE", "PRESET", "CONNECTIONS", "STORAGE", "ALLOW_FROM", "SETTINGS", "DATABASES", "CLUSTER"}}
	for _, c := range checked {
		h := c.Host
		addr := h.Address
		if h.Port != 22 {
			addr += ":" + strconv.Itoa(h.Port)
		}
		storage := storageOf(h)
		conns := "by RAM"
		if h.Connections > 0 {
			conns = strconv.Itoa(h.Connections)
		}
		allow := strings.Join(allowStrings(h), ",")
		switch {
		case allow == "":
			allow = "localhost only"
		case h.TLS:
			allow += " (TLS)"
		default:
			allow += " (no TLS)"
		}
		var dbs []string
		for _, d := range h.Databases {
			owner := d.Owner
			if d.Adopt {
				owner += ", adopted"
			}
			dbs = append(dbs, d.Name+"("+owner+")")
		}
		settings := h.Settings.Keys()
		cluster := "-"
		if c := clusterOf(h); c != nil {
			cluster = c.Name + " (" + string(c.Role) + ")"
		}
		t.Rows = append(t.Rows, []string{h.Name, addr, h.User, string(h.Engine), h.Preset, conns, storage, allow,
			strings.Join(settings, ","), strings.Join(dbs, ","), cluster})
	}
	return t
}

// LabStatus is `pidb lab status`'s table: each host of the lab.
func LabStatus(st []lab.HostStatus) Table {
	t := Table{Header: []string{"HOST", "ADDRESS", "STATE", "MODEL", "RAM", "RELEASE", "ENGINE", "SPEED", "STORAGE", "LATENCY"}}
	for _, s := range st {
		t.Rows = append(t.Rows, []string{s.Name, s.Address, s.State, s.Model, strconv.FormatUint(s.RAM>>20, 10) + " MB", cmp.Or(s.Release, "-"), string(s.Engine), s.Speed, s.Storage, cmp.Or(s.Latency, "-")})
	}
	return t
}

// Snapshots is `pidb lab snapshot --list`'s table.
func Snapshots(snaps []lab.SnapshotInfo) Table {
	t := Table{Header: []string{"SNAPSHOT", "OF HOST", "MODEL", "RELEASE", "TAKEN"}}
	for _, s := range snaps {
		t.Rows = append(t.Rows, []string{s.Name, s.From, s.Model, s.Release, s.Taken.Local().Format("2006-01-02 15:04:05")})
	}
	return t
}

// Demo is `pidb demo`'s table: every validation of its story.
func Demo(vs []demo.Validation) Table {
	t := Table{Header: []string{"HOST", "COOLING", "SPEED", "VERDICT", "TPS", "P95_MS", "MAX_C", "THROTTLED", "REASONS"}}
	for _, v := range vs {
		t.Rows = append(t.Rows, []string{v.Host, string(v.Cooling), v.Speed, string(v.Verdict), fmt.Sprintf("%.1f", v.TPS), fmt.Sprintf("%.2f", v.P95Ms), numOr(v.MaxTempC, "%.1f"),
			fmt.Sprint(v.Throttled), strings.Join(v.Codes(), ",")})
	}
	return t
}
