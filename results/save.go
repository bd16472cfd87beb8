package results

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"pidb/internal/filecap"
	"pidb/internal/sudoowner"
	"pidb/thermal"
)

// Files and folders of saved runs are readable by everyone: they hold no
// secret (passwords never reach a run).
const (
	fileMode = 0o644
	dirMode  = 0o755
)

// Save writes the run to dir/HOST/ID/ (run.json, series.csv, thermal.csv)
// and returns that folder. The files are written into a hidden folder
// beside it, which is renamed into place, so a reader sees the whole run or
// none of it. Run as root under sudo, the folders and files it makes belong
// to the user who ran sudo (SUDO_UID, SUDO_GID), who can then read and
// remove them.
func Save(dir string, r Run) (string, error) {
	if r.Host == "" || r.ID == "" {
		return "", errors.New("save run: no host or run id")
	}
	r.Schema = Schema
	own := sudoowner.Current()
	hostDir := filepath.Join(dir, r.Host)
	if err := own.MkdirAll(hostDir, dirMode); err != nil {
		return "", err
	}
	// two runs of a host that began in one second (a load, then the run)
	// have one id: the second gets -2, and so on
	base, runDir := r.ID, filepath.Join(hostDir, r.ID)
	for n := 2; ; n++ {
		if _, err := os.Lstat(runDir); os.IsNotExist(err) {
			break
		}
		if n > 100 {
			return "", fmt.Errorf("save run: %s is there already, and %d more of its id", filepath.Join(hostDir, base), n-2)
		}
		r.ID = base + "-" + strconv.Itoa(n)
		runDir = filepath.Join(hostDir, r.ID)
	}
	tmp, err := os.MkdirTemp(hostDir, ".saving-"+r.ID+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // after a rename there is nothing left to remove
	files, err := r.files()
	if err != nil {
		return "", err
	}
	for _, name := range []string{"run.json", "series.csv", "thermal.csv"} {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, files[name], fileMode); err != nil {
			return "", err
		}
		if err := own.Chown(p); err != nil {
			return "", err
		}
	}
	if err := os.Chmod(tmp, dirMode); err != nil {
		return "", err
	}
	if err := own.Chown(tmp); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, runDir); err != nil {
		return "", err
	}
	return runDir, nil
}

// files renders the run's files.
func (r Run) files() (map[string][]byte, error) {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	rows := [][]string{{"t_s", "transactions", "tps", "qps", "p50_ms", "p95_ms", "p99_ms", "errors"}}
	for _, i := range r.Series {
		rows = append(rows, []string{num(i.T), strconv.FormatInt(i.Transactions, 10), num(i.TPS), num(i.QPS),
			num(i.P50Ms), num(i.P95Ms), num(i.P99Ms), strconv.FormatInt(i.Errors, 10)})
	}
	var series bytes.Buffer
	if err := csv.NewWriter(&series).WriteAll(rows); err != nil {
		return nil, err
	}
	var therm bytes.Buffer
	therm.WriteString(thermal.CSVHeader)
	if err := thermal.WriteCSV(&therm, r.ThermalReadings()...); err != nil {
		return nil, err
	}
	return map[string][]byte{"run.json": append(data, '\n'), "series.csv": series.Bytes(), "thermal.csv": therm.Bytes()}, nil
}

// ThermalReadings are the run's readings as package thermal has them
// (NaN where the temperature is unknown), for its CSV and the verdict.
func (r Run) ThermalReadings() []thermal.Reading {
	out := make([]thermal.Reading, 0, len(r.Thermal))
	for _, x := range r.Thermal {
		rd := thermal.Reading{Host: r.Host, At: x.At, TempC: math.NaN()}
		if x.TempC != nil {
			rd.TempC = *x.TempC
		}
		if x.ArmHz != nil {
			rd.ArmHz = *x.ArmHz
		}
		if x.Throttled != nil {
			rd.Throttled, rd.ThrottledKnown = thermal.Flags(*x.Throttled), true
		}
		out = append(out, rd)
	}
	return out
}

func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// MaxRunSize is the largest run.json pidb reads: an hour's run of a
// hundred hosts, sampled every second, takes well under it.
const MaxRunSize = 256 << 20

// Load reads a run.json.
func Load(path string) (Run, error) {
	data, err := filecap.Read(path, MaxRunSize)
	if err != nil {
		return Run{}, err
	}
	var r Run
	if err := json.Unmarshal(data, &r); err != nil {
		return Run{}, fmt.Errorf("%s: %w", path, err)
	}
	if r.Schema < 1 || r.Schema > Schema {
		return Run{}, fmt.Errorf("%s: schema %d; this pidb reads 1 to %d", path, r.Schema, Schema)
	}
	if r.Workload.Name == "quiz" && r.Workload.Revision == 0 {
		r.Workload.Name, r.Workload.Revision = EarlierQuiz, 1
	}
	return r, nil
}

// Listed is one run folder found by List: its run, or why it cannot be read
// (a broken file, or a run from a newer pidb).
type Listed struct {
	Dir string
	Run Run
	Err error
}

// List finds the runs under dir (dir/HOST/RUN-ID/run.json), newest first. A
// folder whose run.json is missing or cannot be read is listed with its
// error; folders being saved (hidden ones) are not listed. A dir that does
// not exist holds no runs.
func List(dir string) ([]Listed, error) {
	hosts, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Listed
	for _, h := range hosts {
		if !h.IsDir() || h.Name()[0] == '.' {
			continue
		}
		runs, err := listRuns(filepath.Join(dir, h.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, runs...)
	}
	newestFirst(out)
	return out, nil
}

// ListHost finds the runs in one host's folder (dir/RUN-ID/run.json),
// newest first, as List lists them.
func ListHost(dir string) ([]Listed, error) {
	out, err := listRuns(dir)
	newestFirst(out)
	return out, err
}

// listRuns reads each run folder in dir: its run, or its error.
func listRuns(dir string) ([]Listed, error) {
	runs, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Listed
	for _, rd := range runs {
		if !rd.IsDir() || rd.Name()[0] == '.' {
			continue
		}
		l := Listed{Dir: filepath.Join(dir, rd.Name())}
		l.Run, l.Err = Load(filepath.Join(l.Dir, "run.json"))
		out = append(out, l)
	}
	return out, nil
}

// newestFirst sorts runs by their folders' names: a run id starts with
// its start time (NewID), so the name sorts runs by time, broken ones too.
func newestFirst(out []Listed) {
	sort.SliceStable(out, func(i, j int) bool {
		a, b := filepath.Base(out[i].Dir), filepath.Base(out[j].Dir)
		if a != b {
			return a > b
		}
		return out[i].Dir < out[j].Dir
	})
}
