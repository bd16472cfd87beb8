package main

import (
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"pidb/inventory"
	"pidb/output"
)

func inventoryCommand() *cli.Command {
	return &cli.Command{
		Name:  "inventory",
		Usage: "work with the inventory file",
		Subcommands: []*cli.Command{{
			Name:      "check",
			Usage:     "validate the inventory and print the resolved hosts",
			UsageText: "pidb inventory check -i FILE [--limit NAMES] [--json]",
			Flags:     []cli.Flag{inventoryFlag(), limitFlag(), jsonFlag()},
			Action: func(c *cli.Context) error {
				_, hosts, err := loadHosts(c)
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return output.JSON(c.App.Writer, hostViews(hosts))
				}
				return table(c, hostHeader, hostRows(hosts))
			},
		}},
	}
}

// hostView is a resolved host as `inventory check --json` prints it.
type hostView struct {
	Host         string         `json:"host"`
	Address      string         `json:"address"`
	Port         int            `json:"port"`
	User         string         `json:"user"`
	IdentityFile string         `json:"identity_file"`
	KnownHosts   string         `json:"known_hosts"`
	Engine       string         `json:"engine"`
	Preset       string         `json:"preset"`
	Storage      string         `json:"storage"`
	Connections  *int           `json:"max_connections"` // null: scaled to RAM
	AllowFrom    []string       `json:"allow_from"`
	TLS          bool           `json:"tls"` // logins from allow_from must use TLS
	Settings     map[string]any `json:"settings"`
	Databases    []databaseView `json:"databases"`
	Bench        map[string]any `json:"bench"`
	Line         int            `json:"line"`
}

type databaseView struct {
	Name  string `json:"name"`
	Owner string `json:"owner"`
	Adopt bool   `json:"adopt"` // take over an owner pidb did not make
}

// storageOf is the host's storage as the table and the JSON both say it:
// the inventory's, or "detect" (facts find it on the host).
func storageOf(h inventory.Host) string {
	if h.Storage == "" {
		return "detect"
	}
	return h.Storage
}

func hostViews(hosts []inventory.Host) []hostView {
	views := make([]hostView, 0, len(hosts))
	for _, h := range hosts {
		v := hostView{
			Host: h.Name, Address: h.Address, Port: h.Port, User: h.User,
			IdentityFile: h.IdentityFile, KnownHosts: h.KnownHosts,
			Engine: h.Engine, Preset: h.Preset, Storage: storageOf(h),
			AllowFrom: allowStrings(h), TLS: h.TLS, Settings: raw(h.Settings), Bench: raw(h.Bench),
			Databases: []databaseView{}, Line: h.Line,
		}
		if h.Connections > 0 {
			v.Connections = &h.Connections
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

var hostHeader = []string{"HOST", "ADDRESS", "USER", "ENGINE", "PRESET", "CONNECTIONS", "STORAGE", "ALLOW_FROM", "SETTINGS", "DATABASES"}

func hostRows(hosts []inventory.Host) [][]string {
	rows := make([][]string, 0, len(hosts))
	for _, h := range hosts {
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
		rows = append(rows, []string{h.Name, addr, h.User, h.Engine, h.Preset, conns, storage, allow,
			strings.Join(settings, ","), strings.Join(dbs, ",")})
	}
	return rows
}
