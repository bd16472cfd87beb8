package provision

import (
	"crypto/sha256"
	"crypto/subtle"
	"strconv"
	"strings"
)

// Oracle MySQL's caching_sha2_password (the default from 8.0, the only
// built-in one from 9.0) stores "$A$" + the rounds in thousands as three
// hex digits + "$" + a 20-byte salt + SHA-256 crypt's 43-character digest
// of the password (Drepper's SHA-crypt, with MySQL's longer salt).

// caching2Prefix starts a caching_sha2_password hash.
const caching2Prefix = "$A$"

// caching2Matches checks password against a caching_sha2_password hash.
// ok is false where the hash is not of that shape.
func caching2Matches(stored, password string) (match, ok bool) {
	rest, found := strings.CutPrefix(stored, caching2Prefix)
	if !found || len(rest) != 3+1+20+43 || rest[3] != '$' {
		return false, false
	}
	k, err := strconv.ParseUint(rest[:3], 16, 16)
	if err != nil || k == 0 {
		return false, false
	}
	salt, digest := rest[4:24], rest[24:]
	got := sha256Crypt([]byte(password), []byte(salt), int(k)*1000)
	return subtle.ConstantTimeCompare([]byte(got), []byte(digest)) == 1, true
}

// sha256Crypt is SHA-crypt's SHA-256 digest of password with salt and
// rounds, in its own base64 (43 characters), without its "$5$" framing.
func sha256Crypt(password, salt []byte, rounds int) string {
	sum := func(parts ...[]byte) []byte {
		h := sha256.New()
		for _, p := range parts {
			h.Write(p)
		}
		return h.Sum(nil)
	}
	// repeat is b repeated to n bytes
	repeat := func(b []byte, n int) []byte {
		out := make([]byte, 0, n)
		for len(out)+len(b) <= n {
			out = append(out, b...)
		}
		return append(out, b[:n-len(out)]...)
	}
	b := sum(password, salt, password)
	h := sha256.New()
	h.Write(password)
	h.Write(salt)
	h.Write(repeat(b, len(password)))
	for n := len(password); n > 0; n >>= 1 {
		if n&1 != 0 {
			h.Write(b)
		} else {
			h.Write(password)
		}
	}
	a := h.Sum(nil)
	dp := sha256.New()
	for range len(password) {
		dp.Write(password)
	}
	p := repeat(dp.Sum(nil), len(password))
	ds := sha256.New()
	for range 16 + int(a[0]) {
		ds.Write(salt)
	}
	s := repeat(ds.Sum(nil), len(salt))
	c := a
	for i := range rounds {
		h := sha256.New()
		if i&1 != 0 {
			h.Write(p)
		} else {
			h.Write(c)
		}
		if i%3 != 0 {
			h.Write(s)
		}
		if i%7 != 0 {
			h.Write(p)
		}
		if i&1 != 0 {
			h.Write(c)
		} else {
			h.Write(p)
		}
		c = h.Sum(nil)
	}
	const b64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	var out strings.Builder
	put := func(b2, b1, b0 byte, n int) {
		w := uint(b2)<<16 | uint(b1)<<8 | uint(b0)
		for range n {
			out.WriteByte(b64[w&0x3f])
			w >>= 6
		}
	}
	for _, g := range [][3]int{{0, 10, 20}, {21, 1, 11}, {12, 22, 2}, {3, 13, 23}, {24, 4, 14}, {15, 25, 5}, {6, 16, 26}, {27, 7, 17}, {18, 28, 8}, {9, 19, 29}} {
		put(c[g[0]], c[g[1]], c[g[2]], 4)
	}
	put(0, c[31], c[30], 3)
	return out.String()
}
