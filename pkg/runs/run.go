// Package runs holds what a run is (runs.md): its window, its steady-state
// window, the files Locust left behind and the readers for them.
package runs

// Artifact file names in a run directory or results-store run prefix.
const (
	FileStatsHistory  = "stats_history.csv"
	FileStats         = "stats.csv"
	FileStatsJSONL    = "stats.jsonl"
	FileStatus        = "status.json"
	FileServerSummary = "server_summary.json"
	FileFailures      = "failures.csv"
	FileExceptions    = "exceptions.csv"
	FileClusterBefore = "cluster_before.json"
	FilePSISeries     = "psi_series.json"
	// FileNotices is the export's notices (why a field is null), beside
	// server_summary.json.
	FileNotices = "notices.json"
	// FileLogs is the run's log (Locust master and workers), which holds
	// the ladder lines of a ladder run.
	FileLogs = "logs.txt"
)

// ArtifactFiles returns the file names Artifacts tracks, in a stable order
// (a fresh slice: no shared mutable state).
func ArtifactFiles() []string {
	return []string{
		FileStatsHistory, FileStats, FileStatsJSONL, FileStatus,
		FileServerSummary, FileFailures, FileExceptions, FileClusterBefore, FilePSISeries, FileLogs,
		FileNotices,
	}
}

// Artifacts says which of a run's optional files exist.
type Artifacts struct {
	StatsHistory  bool
	Stats         bool
	StatsJSONL    bool
	Status        bool
	ServerSummary bool
	Failures      bool
	Exceptions    bool
	ClusterBefore bool
	PSISeries     bool
	Logs          bool
	Notices       bool
}

// field returns the flag for one of ArtifactFiles() (nil for other names).
func (a *Artifacts) field(name string) *bool {
	switch name {
	case FileStatsHistory:
		return &a.StatsHistory
	case FileStats:
		return &a.Stats
	case FileStatsJSONL:
		return &a.StatsJSONL
	case FileStatus:
		return &a.Status
	case FileServerSummary:
		return &a.ServerSummary
	case FileFailures:
		return &a.Failures
	case FileExceptions:
		return &a.Exceptions
	case FileClusterBefore:
		return &a.ClusterBefore
	case FilePSISeries:
		return &a.PSISeries
	case FileLogs:
		return &a.Logs
	case FileNotices:
		return &a.Notices
	}
	return nil
}

// Has reports whether the named file (one of ArtifactFiles()) exists.
func (a Artifacts) Has(name string) bool {
	if p := a.field(name); p != nil {
		return *p
	}
	return false
}

// Set records whether the named file exists; other names are ignored and
// reported as false.
func (a *Artifacts) Set(name string, present bool) bool {
	p := a.field(name)
	if p == nil {
		return false
	}
	*p = present
	return true
}

// ArtifactsFromNames marks every known file name found in names (base names,
// as listed from a directory or a store prefix); unknown names are ignored.
func ArtifactsFromNames(names []string) Artifacts {
	var a Artifacts
	for _, n := range names {
		a.Set(n, true)
	}
	return a
}

// Run is one benchmark trial (runs.md "A run"). Times are Unix seconds.
type Run struct {
	ID       string
	TestName string
	Tag      string
	// Start, End: the run window.
	Start, End int64
	// SteadyStart, SteadyEnd: the steady-state window, within [Start, End].
	SteadyStart, SteadyEnd int64
	// SteadyFromSamples is false when the steady window fell back to the run
	// window (no samples, peak <= 0, or the samples lay outside the run);
	// whoever shows the run adds a notice saying so.
	SteadyFromSamples bool
	// PeakUsers is the highest user count seen (nil: none seen).
	PeakUsers *float64
	// Artifacts says which files exist.
	Artifacts Artifacts
	// Dir is the local run directory ("" if none).
	Dir string
	// StorePath is the run's prefix inside the results store, relative to the
	// store URL's prefix ("" if the run is not from a store).
	StorePath string
}

// UserSample is one user-count point: a Unix second and a finite count.
type UserSample struct {
	Timestamp int64
	Users     float64
}
