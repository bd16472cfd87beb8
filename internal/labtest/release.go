package labtest

// PG is the PostgreSQL major the lab's default release installs
// (lab.DefaultRelease's Postgres; TestPGIsTheDefaultReleases holds them
// together), and PGUnit, PGEtc and PGData its cluster's unit and folders:
// where the lab tests look on a host booted without a release of its own.
const (
	PG     = "17"
	PGUnit = "postgresql@" + PG + "-main"
	PGEtc  = "/etc/postgresql/" + PG + "/main"
	PGData = "/var/lib/postgresql/" + PG + "/main"
)
