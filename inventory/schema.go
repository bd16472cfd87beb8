package inventory

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"pidb/dbms"
)

// dataDevice is data_device's value: auto, or a whole USB (sd*) or NVMe
// disk.
var dataDevice = regexp.MustCompile(`^(auto|/dev/sd[a-z]{1,2}|/dev/nvme[0-9]{1,2}n[0-9]{1,2}|/dev/disk/by-(?:id|path)/[A-Za-z0-9][A-Za-z0-9._:+@-]{0,200})$`)

// partitionName is a stable name of a partition, not a whole disk
// (udev's "-part1")
var partitionName = regexp.MustCompile(`-part[0-9]+$`)

// StorageKinds are the storage kinds an inventory may set to override detection.
var StorageKinds = []string{"sd", "usb", "nvme"}

// checker validates one decoded TOML value.
type checker func(v any) error

// table is the schema of one TOML table: its known keys.
type table map[string]checker

var (
	hostName   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)
	sqlName    = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)
	sqlUser    = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,31}$`)
	settingKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)
	address    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.:-]*$`)
	// digitsOnly is a port; digitsAndDots an IPv4 address's shape
	digitsOnly    = regexp.MustCompile(`^[0-9]+$`)
	digitsAndDots = regexp.MustCompile(`^[0-9.]+$`)
)

func str(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("want a string, not %s", tomlType(v))
	}
	return s, nil
}

func isString(v any) error { _, err := str(v); return err }

func nonEmptyString(v any) error {
	s, err := str(v)
	if err == nil && strings.TrimSpace(s) == "" {
		err = fmt.Errorf("must not be empty")
	}
	return err
}

func oneOf(allowed ...string) checker {
	return func(v any) error {
		s, err := str(v)
		if err != nil {
			return err
		}
		for _, a := range allowed {
			if s == a {
				return nil
			}
		}
		return fmt.Errorf("unknown value %q: want one of %s", s, quoteList(allowed))
	}
}

func matching(re *regexp.Regexp, what, hint string) checker {
	return func(v any) error {
		s, err := str(v)
		if err != nil {
			return err
		}
		if !re.MatchString(s) {
			if hint != "" {
				return fmt.Errorf("bad %s %q: %s", what, s, hint)
			}
			return fmt.Errorf("bad %s %q", what, s)
		}
		return nil
	}
}

func intIn(lo, hi int64) checker {
	return func(v any) error {
		n, ok := v.(int64)
		if !ok {
			return fmt.Errorf("want an integer, not %s", tomlType(v))
		}
		if n < lo || n > hi {
			return fmt.Errorf("%d is out of range %d-%d", n, lo, hi)
		}
		return nil
	}
}

func numberIn(lo, hi float64) checker {
	return func(v any) error {
		var f float64
		switch x := v.(type) {
		case int64:
			f = float64(x)
		case float64:
			f = x
		default:
			return fmt.Errorf("want a number, not %s", tomlType(v))
		}
		if f < lo || f > hi {
			num := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
			return fmt.Errorf("%s is out of range %s-%s", num(f), num(lo), num(hi))
		}
		return nil
	}
}

func isBool(v any) error {
	if _, ok := v.(bool); !ok {
		return fmt.Errorf("want true or false, not %s", tomlType(v))
	}
	return nil
}

func isDuration(v any) error {
	s, err := str(v)
	if err != nil {
		return fmt.Errorf("want a duration string like \"5m\", not %s", tomlType(v))
	}
	_, err = ParseDuration(s)
	return err
}

func isCIDRList(v any) error {
	list, ok := v.([]any)
	if !ok {
		return fmt.Errorf("want an array of addresses or CIDRs, like [\"192.168.1.0/24\"], not %s", tomlType(v))
	}
	for _, item := range list {
		s, err := str(item)
		if err != nil {
			return fmt.Errorf("want an array of strings: %w", err)
		}
		if _, err := parsePrefix(s); err != nil {
			return err
		}
	}
	return nil
}

// parsePrefix reads a CIDR, or a single address as a one-address prefix.
func parsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("bad CIDR %q: want an address and a prefix length, like \"192.168.1.0/24\"", s)
		}
		if p.Masked() != p {
			return netip.Prefix{}, fmt.Errorf("bad CIDR %q: host bits are set (did you mean %q?)", s, p.Masked().String())
		}
		return p, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("bad CIDR %q: want an address or a CIDR, like \"192.168.1.0/24\"", s)
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

func engineName(v any) error {
	s, err := str(v)
	if err != nil {
		return err
	}
	if normalizeEngine(s) == "" {
		return fmt.Errorf("unknown engine %q: want \"postgres\" (or \"postgresql\") or \"mysql\" (\"mariadb\" means \"mysql\")", s)
	}
	return nil
}

// normalizeEngine is the family an inventory's engine names
// (dbms.ParseFamily): "postgresql" is "postgres", "mariadb" is read as
// "mysql", the family, whose flavour comes from the host's facts; "" for
// none.
func normalizeEngine(s string) dbms.Family {
	f, _ := dbms.ParseFamily(s)
	return f
}

// anyTable accepts any keys; used for [host.settings], whose names the tuner checks.
const anyTable = "any"

var (
	accessKeys = table{
		"user":          matching(regexp.MustCompile(`^[a-z_][a-z0-9_.-]{0,31}$`), "user name", "want a Linux login: lower-case letters, digits, '_', '.' and '-', beginning with a letter or '_', 32 at most (like pi)"),
		"port":          intIn(1, 65535),
		"identity_file": nonEmptyString,
		"known_hosts":   nonEmptyString,
		"engine":        engineName,
		"preset":        nonEmptyString, // the names: the Presets option
		"allow_from":    isCIDRList,
		"allow_public":  isBool,
		"tls":           isBool,
		"storage":       oneOf(StorageKinds...),
		// the drive the database's data moves to, and whether pidb may
		// erase what is on it
		"data_device":      isDataDevice,
		"data_device_wipe": isBool,
		// the CPU frequency governor the os step sets ("ondemand": the
		// distribution's, left alone)
		"os_governor": oneOf("performance", "ondemand", "schedutil", "conservative", "powersave"),
		// where the journal keeps its logs: on the card (bounded), or in
		// RAM only, lost at a reboot
		"os_journal": oneOf("persistent", "volatile"),
		// the connections the tuner plans for (per-connection memory, the
		// budget); the same as [host.settings] max_connections
		"max_connections": intIn(1, 100000),
	}
	databaseKeys = table{
		"name":  matching(sqlName, "database name", "use lower case letters, digits and _, up to 63"),
		"owner": matching(sqlUser, "owner", "use lower case letters, digits and _, up to 32"),
		// an owner that is on the server already and that pidb did not
		// make is refused unless this says pidb may take it over
		"adopt": isBool,
	}
)

// hostAddress is an IP address (IPv6 too, "::1" as well as "fe80::1") or a
// DNS name.
func hostAddress(v any) error {
	s, ok := v.(string)
	if !ok {
		return matching(address, "address", "want an IP address or a DNS name")(v)
	}
	if a, err := netip.ParseAddr(s); err == nil {
		if a.Zone() != "" {
			// netip takes any text after the %, which then goes into
			// known_hosts, conninfo and SQL
			return fmt.Errorf("address %q names an IPv6 zone (%%%s): pidb takes an address without one", s, a.Zone())
		}
		return nil
	}
	// an address with its port: the port has a key of its own
	if h, p, err := net.SplitHostPort(s); err == nil && h != "" && digitsOnly.MatchString(p) {
		return fmt.Errorf("address %q has a port: put %q in address and the port in port = %s", s, h, p)
	}
	if strings.Contains(s, ":") {
		return fmt.Errorf("bad address %q: not an IP address, and a DNS name has no ':'", s)
	}
	// digits and dots are an IPv4 address or nothing: never a DNS name
	// (a top-level domain is never all digits)
	if digitsAndDots.MatchString(s) {
		return fmt.Errorf("bad address %q: not an IPv4 address (four numbers 0-255, with no leading zeros), and not a DNS name", s)
	}
	return matching(address, "address", "want an IP address or a DNS name")(v)
}

// isDataDevice accepts data_device: "auto", a whole USB or NVMe disk by
// its kernel name, or by the stable name udev gives it (what ls
// /dev/disk/by-id lists), never a partition's.
func isDataDevice(v any) error {
	if s, ok := v.(string); ok && strings.HasPrefix(s, "/dev/disk/") && partitionName.MatchString(s) {
		return fmt.Errorf("bad data device %q: that names a partition: name the whole disk (%s), which pidb formats whole", s, partitionName.ReplaceAllString(s, ""))
	}
	return matching(dataDevice, "data device", `want "auto" or a whole USB or NVMe disk, like "/dev/sda", "/dev/nvme0n1" or its stable name in /dev/disk/by-id (not a partition, not the SD card)`)(v)
}

// isZeroOrDuration accepts "0" or "0s" (no wait) as well as a duration.
func isZeroOrDuration(v any) error {
	if s, ok := v.(string); ok && (s == "0" || s == "0s") {
		return nil
	}
	return isDuration(v)
}

// hostKeys is the schema of a [[host]]: its name and address, and the keys
// it shares with [defaults].
func hostKeys(access table) table {
	t := table{
		"name":    matching(hostName, "host name", "use letters, digits, '.', '_' and '-'"),
		"address": hostAddress,
	}
	for k, c := range access {
		t[k] = c
	}
	return t
}

// hostKeyNames are the keys a [[host]] may hold.
func hostKeyNames(access table) []string {
	names := []string{"settings", "database", "bench"}
	for k := range hostKeys(access) {
		names = append(names, k)
	}
	return names
}

// HostKeys are the keys a [[host]] may set for itself (beside its
// tables), in name order: its name and address, and those it shares with
// [defaults].
func HostKeys() []string { return sortedKeys(hostKeys(accessKeys)) }

// topLevel are the tables an inventory may hold.
var topLevel = []string{"defaults", "host", "cluster", "bench", "thermal", "validate"}

func quoteList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
