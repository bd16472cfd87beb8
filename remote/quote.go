package remote

import "strings"

// Quote makes s one word for a POSIX shell, whatever it holds: quotes, $(),
// backticks, newlines and all. Plain words are left as they are.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Command joins a program and its arguments into one shell command line,
// quoting each word.
func Command(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
}

// SudoCommand wraps cmd so it runs as root through non-interactive sudo, in a
// shell of its own: sudo -n -- sh -c 'cmd'.
func SudoCommand(cmd string) string {
	return "sudo -n -- sh -c " + Quote(cmd)
}
