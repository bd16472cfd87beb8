package provision

import (
	"encoding/hex"
	"testing"
)

// TestCaching2Matches: hashes Oracle MySQL 9.7.4 stored for two accounts
// (HEX(authentication_string) of CREATE USER ... IDENTIFIED BY, on the
// lab's ubuntu release), checked against their passwords and others; and
// the standard's own SHA-256 crypt vector.
func TestCaching2Matches(t *testing.T) {
	for _, c := range []struct{ hexHash, password string }{
		{"2441243030412412465D011D21191D0A2C7E3E706552506B4D5A2C69735257425046316D4E6144346D475358494945673363524D372F734F2E30644F3247496E58524C724930", "pw"},
		{"2441243030412459586C251A520D792603287B1C390F140A3E7A1F324A54446D2E4656306C4D39555875526567514E62665A6F3642737567676747366D4C414D526834477333", "Zq7xYk3mPa9Ws2Ld"},
	} {
		raw, err := hex.DecodeString(c.hexHash)
		if err != nil {
			t.Fatal(err)
		}
		stored := string(raw)
		if match, ok := caching2Matches(stored, c.password); !ok || !match {
			t.Errorf("%q: match %v ok %v, want a match", c.password, match, ok)
		}
		if match, ok := matchesStored(stored, c.password); !ok || !match {
			t.Errorf("matchesStored %q: match %v ok %v", c.password, match, ok)
		}
		for _, other := range []string{"", "pW", c.password + "x"} {
			if match, ok := caching2Matches(stored, other); !ok || match {
				t.Errorf("%q against %q's hash: match %v ok %v, want no match", other, c.password, match, ok)
			}
		}
	}
	for _, bad := range []string{"", "$A$005$short", "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19", "$A$0G0$" + string(make([]byte, 63))} {
		if _, ok := caching2Matches(bad, "pw"); ok {
			t.Errorf("%q taken for a caching_sha2_password hash", bad)
		}
	}
	// glibc's crypt(3) of "Hello world!" with "$5$saltstring" (5000
	// rounds): $5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5
	if got := sha256Crypt([]byte("Hello world!"), []byte("saltstring"), 5000); got != "5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5" {
		t.Errorf("SHA-crypt's example: %s", got)
	}
}
