package provision

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
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
// mysql_native_password hash MariaDB keeps ("*" + hex(SHA1(SHA1(pw)))),
// or Oracle MySQL's caching_sha2_password ("$A$..."). ok is false for a
// hash it cannot check (another plugin's).
func matchesStored(stored, password string) (match, ok bool) {
	switch {
	case strings.HasPrefix(stored, caching2Prefix):
		return caching2Matches(stored, password)
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

// What is sent instead of a password: the server stores a hash, and the
// accounts step sends it that hash, made here, so the password never
// leaves the controller and cannot reach a server log, whatever the
// server logs.

// scramIterations is PostgreSQL's own default (scram_iterations).
const scramIterations = 4096

// scramVerifier is PostgreSQL's stored form of a SCRAM-SHA-256 password
// (RFC 5802/7677), as CREATE ROLE ... PASSWORD makes it:
// "SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>". A role
// given it as its password stores it as it is.
func scramVerifier(password string, salt []byte, iterations int) string {
	salted, err := pbkdf2.Key(sha256.New, password, salt, iterations, sha256.Size)
	if err != nil {
		panic("pbkdf2: " + err.Error()) // only for parameters no caller passes
	}
	hm := func(msg string) []byte {
		mac := hmac.New(sha256.New, salted)
		mac.Write([]byte(msg))
		return mac.Sum(nil)
	}
	clientKey := hm("Client Key")
	storedKey := sha256.Sum256(clientKey)
	b64 := base64.StdEncoding.EncodeToString
	return "SCRAM-SHA-256$" + strconv.Itoa(iterations) + ":" + b64(salt) + "$" + b64(storedKey[:]) + ":" + b64(hm("Server Key"))
}

// newScramVerifier is a verifier with a fresh random salt of 16 bytes, as
// PostgreSQL makes them.
func newScramVerifier(password string) string {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		panic("crypto/rand: " + err.Error())
	}
	return scramVerifier(password, salt, scramIterations)
}

// nativeHash is the mysql_native_password hash MariaDB stores, "*" and
// hex(SHA1(SHA1(password))) in upper case, for IDENTIFIED BY PASSWORD.
func nativeHash(password string) string {
	h1 := sha1.Sum([]byte(password))
	h2 := sha1.Sum(h1[:])
	return "*" + strings.ToUpper(hex.EncodeToString(h2[:]))
}
