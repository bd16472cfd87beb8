package action

import (
	"context"

	"pidb/inventory"
	"pidb/job"
	"pidb/progress"
)

// CredentialsOptions are `pidb credentials`'s: one host, by name.
type CredentialsOptions struct {
	Fleet           // how to reach the host for CAFile; its Limit is not read
	Host     string // the host's name
	Database string // an application database of the host's; "": pidb's own account
	// CAFile, where set, gets the server's certificate, read over SSH, and
	// the URL checks the server against it.
	CAFile string
}

// HostCredentials is a connection URL with the password pidb generated,
// and what to know about it (a certificate that does not name the host's
// address).
type HostCredentials struct {
	URL  string
	Note string
}

// Credentials gives a host's connection URL. The password comes first: a
// host that has none yet is an error before any connection.
func Credentials(ctx context.Context, o CredentialsOptions) (HostCredentials, error) {
	inv, err := o.inventory()
	if err != nil {
		return HostCredentials{}, err
	}
	h, err := inv.Named(o.Host)
	if err != nil {
		return HostCredentials{}, err
	}
	u, err := job.Credentials(inv, h, o.Database)
	if err != nil || o.CAFile == "" {
		return HostCredentials{URL: u}, err
	}
	res, err := each(ctx, o.Fleet, []inventory.Host{h}, func(ctx context.Context, h inventory.Host, c job.Conn, r progress.Reporter) (job.CA, error) {
		return job.ServerCA(ctx, h, c, r)
	})
	if err == nil {
		err = Err(res)
	}
	if err != nil {
		return HostCredentials{}, err
	}
	ca := res[0].Value
	if err := job.WriteCA(o.CAFile, ca); err != nil {
		return HostCredentials{}, err
	}
	u, err = job.CredentialsVerified(inv, h, o.Database, job.Verify{File: o.CAFile, Full: ca.Full})
	return HostCredentials{URL: u, Note: ca.Note(h)}, err
}
