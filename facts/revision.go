package facts

import (
	"strconv"
	"strings"
)

// Board is what a revision code says about a board.
type Board struct {
	Type      string // "4B", "3B", "Zero W", "5", ...
	Processor string // "BCM2711", ...
	RAMBytes  uint64
}

// boardTypes are the type field of new-style revision codes (bits 4-11), as
// the Raspberry Pi documentation lists them ("Raspberry Pi revision codes").
var boardTypes = map[uint32]string{
	0x00: "A", 0x01: "B", 0x02: "A+", 0x03: "B+", 0x04: "2B", 0x06: "CM1", 0x08: "3B", 0x09: "Zero",
	0x0a: "CM3", 0x0c: "Zero W", 0x0d: "3B+", 0x0e: "3A+", 0x10: "CM3+", 0x11: "4B", 0x12: "Zero 2 W",
	0x13: "400", 0x14: "CM4", 0x15: "CM4S", 0x17: "5", 0x18: "CM5", 0x19: "500", 0x1a: "CM5 Lite",
}

var processors = map[uint32]string{0: "BCM2835", 1: "BCM2836", 2: "BCM2837", 3: "BCM2711", 4: "BCM2712"}

// DecodeRevision reads a /proc/cpuinfo revision code. New-style codes (bit
// 23 set) carry the memory size in bits 20-22 (0 = 256 MB ... 6 = 16 GB),
// the processor in bits 12-15 and the board type in bits 4-11. Old-style
// codes (the first Pi 1 boards) are looked up; a leading overvoltage digit
// (as in 1000002) is ignored. ok is false for a code it cannot read.
func DecodeRevision(code string) (Board, bool) {
	n, err := strconv.ParseUint(strings.TrimSpace(code), 16, 32)
	if err != nil {
		return Board{}, false
	}
	v := uint32(n)
	if v&(1<<23) == 0 {
		return oldStyle(v & 0xffff)
	}
	mem := (v >> 20) & 7
	if mem > 6 {
		return Board{}, false
	}
	b := Board{
		Type:      boardTypes[(v>>4)&0xff],
		Processor: processors[(v>>12)&0xf],
		RAMBytes:  (256 << 20) << mem,
	}
	return b, true
}

// oldStyle decodes the revision codes of the first boards, all Pi 1 models
// with a BCM2835.
func oldStyle(v uint32) (Board, bool) {
	b := Board{Processor: "BCM2835"}
	switch v {
	case 0x2, 0x3, 0x4, 0x5, 0x6, 0xd, 0xe, 0xf:
		b.Type = "B"
	case 0x7, 0x8, 0x9:
		b.Type = "A"
	case 0x10, 0x13:
		b.Type = "B+"
	case 0x11, 0x14:
		b.Type = "CM1"
	case 0x12, 0x15:
		b.Type = "A+"
	default:
		return Board{}, false
	}
	switch v {
	case 0x2, 0x3, 0x4, 0x5, 0x6, 0x7, 0x8, 0x9, 0x12:
		b.RAMBytes = 256 << 20
	default:
		b.RAMBytes = 512 << 20
	}
	return b, true
}
