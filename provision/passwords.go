package provision

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
)

// The accounts step checks that the server holds the password kept on the
// controller by comparing it with the server's stored hash, locally: the
// password never travels for the check, and only a hash comes back.

// matchesStored reports whether password matches a server's stored hash:
// PostgreSQL's SCRAM-SHA-256 verifier (RFC 5802/7677) or the
// mysql_native_password hash MariaDB keeps ("*" + hex(SHA1(SHA1(pw)))).
// ok is false for a hash it cannot check (MySQL 8's caching_sha2_password).
func matchesStored(stored, password string) (match, ok bool) {
	switch {
	case strings.HasPrefix(stored, "SCRAM-SHA-256$"):
		return scramMatches(stored, password), true
	case strings.HasPrefix(stored, "*") && len(stored) == 41:
		h1 := sha1.Sum([]byte(password))
		h2 := sha1.Sum(h1[:])
		return strings.EqualFold(stored[1:], hex.EncodeToString(h2[:])), true
	}
	return false, false
}

// scramMatches checks "SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>".
func scramMatches(stored, password string) bool {
	parts := strings.Split(strings.TrimPrefix(stored, "SCRAM-SHA-256$"), "$")
	if len(parts) != 2 {
		return false
	}
	iterSalt, keys := strings.SplitN(parts[0], ":", 2), strings.SplitN(parts[1], ":", 2)
	if len(iterSalt) != 2 || len(keys) != 2 {
		return false
	}
	iter, err := strconv.Atoi(iterSalt[0])
	salt, err1 := base64.StdEncoding.DecodeString(iterSalt[1])
	storedKey, err2 := base64.StdEncoding.DecodeString(keys[0])
	if err != nil || err1 != nil || err2 != nil || iter < 1 {
		return false
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, iter, sha256.Size)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, salted)
	mac.Write([]byte("Client Key"))
	clientKey := sha256.Sum256(mac.Sum(nil))
	return subtle.ConstantTimeCompare(clientKey[:], storedKey) == 1
}
