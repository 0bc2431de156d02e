package gallerytest

import "time"

// galleryCase is what one gallery state (src/gallery/states.tsx) must show.
// Labels are matched as Testing Library's getByLabelText matches them (a
// <label> naming a control, aria-label or aria-labelledby; a trailing
// required "*" ignored), so they are the ones the jsdom tests query.
type galleryCase struct {
	id string
	// labels are drawn, each with the control it names.
	labels []string
	// values are the values of the controls of these labels.
	values map[string]string
	// checked name radios or switches that are on.
	checked []string
	// hidden labels are not on the page at all.
	hidden []string
	// texts are drawn somewhere on the page.
	texts []string
	// menu is the label of a combobox the test opens before checking
	// menuTexts (drawn in its listbox) and taking the screenshot.
	menu      string
	menuTexts []string
	// catalog is the file under src/img/ this state's light screenshot is
	// for (listed in src/plugin.json), or empty.
	catalog string
}

// runLabel is the picker label of a listed run: test name, tag and start in
// UTC (the browser runs with TZ=UTC), or the start alone.
func runLabel(testName, tag string, start int64) string {
	s := time.Unix(start, 0).UTC().Format(time.DateTime)
	if testName == "" {
		return s
	}
	return testName + " " + tag + " " + s
}

var (
	sweep1k = runLabel("sweep-1k", "c0ffee1", 1700000000)
	sweep4k = runLabel("sweep-4k", "c0ffee1", 1700050000)
	newest  = runLabel("", "", 1700100000)
)

const (
	sweep1kID = "sweep-1k/1700000000/c0ffee1"
	sweep4kID = "sweep-4k/1700050000/c0ffee1"
	runsError = `Could not list runs: prometheus: Get "http://prometheus:9090/api/v1/query": dial tcp: lookup prometheus: no such host`
)

var configSections = []string{
	"Prometheus", "Authentication", "Results store", "Verdicts", "Kubernetes", "Selectors", "Advanced",
	"Authentication methods", "TLS settings", "HTTP headers", "Run discovery from Prometheus",
}

var kubernetesModes = []string{"Kubernetes access", "Off", "In-cluster", "Kubeconfig", "Token"}

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

var cases = []galleryCase{
	{
		id: "config-new",
		labels: concat([]string{
			"Prometheus URL", "Authentication method", "Results store URL", "Discover runs", "User-count query", "Run gap (s)",
		}, kubernetesModes),
		values:  map[string]string{"Prometheus URL": "", "Results store URL": "", "Run gap (s)": ""},
		checked: []string{"Discover runs", "Off"},
		hidden:  []string{"Kubeconfig path", "API server URL", "Service-account token", "Worker pool", "Atelet lag (s)", "Bearer token"},
		texts:   configSections,
	},
	{
		id: "config-configured",
		labels: concat([]string{
			"Prometheus URL", "Explore datasource UID", "Bearer token", "Kubeconfig path", "Context", "Pasted kubeconfig", "Live facts max age (s)",
			"Worker pool", "Worker namespace", "Worker container", "Worker pod regex", "Atelet namespace", "Atelet container",
			"Atelet lag (s)", "Request timeout (s)", "Max queries in flight", "Cache entries", "Max response (MiB)",
		}, kubernetesModes),
		values: map[string]string{
			"Prometheus URL":         "http://prometheus.monitoring:9090",
			"Explore datasource UID": "prometheus",
			"Results store URL":      "gs://substrate-bench/results",
			"User-count query":       `sum(locust_users{job="locust"})`,
			"Run gap (s)":            "300",
			"Bearer token":           "configured",
			"Context":                "bench",
			"Pasted kubeconfig":      "configured",
			"Worker namespace":       "bench-workloads",
			"Atelet lag (s)":         "90",
			"Max queries in flight":  "4",
		},
		checked: []string{"Kubeconfig"},
		hidden:  []string{"API server URL", "Service-account token"},
		texts:   configSections,
	},
	{
		id:      "config-basic-auth",
		labels:  concat([]string{"Prometheus URL", "User", "Password", "Live facts max age (s)"}, kubernetesModes),
		values:  map[string]string{"Prometheus URL": "https://mimir.example/prometheus", "User": "grafana", "Password": "configured"},
		checked: []string{"In-cluster"},
		hidden:  []string{"Bearer token", "Kubeconfig path", "API server URL"},
		texts:   []string{"Uses the service account of the pod Grafana runs in."},
	},
	{
		id:     "config-kubernetes-token",
		labels: concat([]string{"Prometheus URL", "API server URL", "Service-account token", "API server CA", "Live facts max age (s)"}, kubernetesModes),
		values: map[string]string{
			"API server URL":         "https://kubernetes.example:6443",
			"Service-account token":  "configured",
			"API server CA":          "configured",
			"Live facts max age (s)": "1800",
		},
		checked: []string{"Token"},
		hidden:  []string{"Kubeconfig path", "Pasted kubeconfig", "Context"},
		catalog: "screenshot-config.png",
	},
	{
		id:     "config-verdicts",
		labels: []string{"Prometheus URL", "Results store URL", "Gates (YAML)", "Acknowledgements (YAML)"},
		values: map[string]string{
			"Results store URL":       "gs://substrate-bench/results",
			"Gates (YAML)":            "gates:\n  - key: cluster_packing_p50\n    min: 0.8\n  - key: restore_p99_s\n    max_regression_pct: 10\n",
			"Acknowledgements (YAML)": "- key: restore_p99_s\n  run: sweep-1k/1700000000/c0ffee1\n  reason: slower restores expected\n",
		},
		texts: []string{"Verdicts", "Gates and change-point acknowledgements"},
	},
	queryCase("query-packing", "Packing", "Dashboard time range", "Busy and total workers over time", nil),
	{
		id:      "query-packing-elapsed",
		labels:  []string{"Query type", "Run", "Align", "Absolute", "Elapsed"},
		values:  map[string]string{"Query type": "Packing", "Run": sweep1kID + ", " + sweep4kID},
		checked: []string{"Elapsed"},
		hidden:  []string{"Scope", "Block", "Test name", "Baseline"},
		texts:   []string{"Busy and total workers over time"},
	},
	{
		id:      "query-psi",
		labels:  []string{"Query type", "Run", "Scope", "Resource", "Series", "Node", "Pod", "CPU", "Memory", "I/O", "Auto", "Bands", "All"},
		values:  map[string]string{"Query type": "Pressure stall (PSI)", "Run": sweep1k},
		checked: []string{"Pod", "Memory", "Bands"},
		hidden:  []string{"Block", "Test name", "Tag"},
		texts:   []string{"Stall % per node or worker pod"},
		catalog: "screenshot-query-psi.png",
	},
	{
		id:     "query-snapshots",
		labels: []string{"Query type", "Run", "Test name", "Tag"},
		values: map[string]string{"Query type": "Snapshots", "Run": "Latest run", "Test name": "sweep-4k", "Tag": ""},
		hidden: []string{"Scope", "Block"},
		texts:  []string{"Snapshot, restore and checkpoint latency"},
	},
	queryCase("query-activeActors", "Active actors", "$run", "Total and active atelets over time", nil),
	{
		id:      "query-workingSet",
		labels:  []string{"Query type", "Run", "Block", "Node", "Worker", "Atelet", "Actor", "Per actor"},
		values:  map[string]string{"Query type": "Working set", "Run": sweep4k},
		checked: []string{"Per actor"},
		hidden:  []string{"Scope", "Resource", "Test name"},
		texts:   []string{"Memory working set"},
	},
	queryCase("query-oomEvents", "OOM events", "Dashboard time range", "OOM kills on nodes and in worker pods", nil),
	queryCase("query-clusterFacts", "Cluster facts", newest, "The cluster the run ran on", nil),
	queryCase("query-frontier", "Frontier", "Dashboard time range", "Density frontier",
		map[string]string{"Test name": "sweep-1k", "Tag": "c0ffee1"}),
	queryCase("query-summary", "Summary", sweep1kID+", "+sweep4kID, "Every server_summary and trial_summary key",
		map[string]string{"Test name": "", "Tag": ""}),
	queryCase("query-runs", "Runs", "Dashboard time range", "Catalogued runs with windows",
		map[string]string{"Test name": "sweep-1k", "Tag": ""}),
	{
		id:     "query-tests",
		labels: []string{"Query type"},
		values: map[string]string{"Query type": "Tests"},
		hidden: []string{"Run", "Scope", "Block", "Test name"},
		texts:  []string{"Test names known to the catalogs"},
	},
	queryCase("query-annotations", "Annotations", "Dashboard time range", "Run and steady-window regions",
		map[string]string{"Test name": "", "Tag": ""}),
	{
		id:     "query-gates",
		labels: []string{"Query type", "Run", "Baseline", "Test name"},
		values: map[string]string{"Query type": "Gates", "Run": "Latest run", "Baseline": "Latest other run", "Test name": "sweep-1k"},
		hidden: []string{"Candidate", "Keys", "Align", "Scope"},
		texts:  []string{"Gate verdicts of one stored run"},
	},
	{
		id:     "query-compare",
		labels: []string{"Query type", "Baseline", "Candidate"},
		values: map[string]string{"Query type": "Compare", "Baseline": sweep1k, "Candidate": "$run"},
		hidden: []string{"Run", "Keys", "Align", "Test name"},
		texts:  []string{"Baseline and candidate run key by key"},
	},
	{
		id:     "query-changePoints",
		labels: []string{"Query type", "Test name", "Keys"},
		values: map[string]string{"Query type": "Change points", "Test name": "sweep-1k", "Keys": "restore_p99_s, cluster_packing_p50"},
		hidden: []string{"Run", "Baseline", "Tag", "Align"},
		texts:  []string{"Change points across the stored runs of a test"},
	},
	{
		id:      "query-summary-numeric",
		labels:  []string{"Query type", "Run", "Format", "Table", "Numeric", "Keys", "Run labels", "Test name", "Tag"},
		values:  map[string]string{"Query type": "Summary", "Run": "Latest run", "Keys": "cluster_packing_p50, restore_p99_s", "Test name": "nightly"},
		checked: []string{"Numeric"},
		hidden:  []string{"Baseline", "Scope", "Block"},
		texts:   []string{"Every server_summary and trial_summary key"},
	},
	{
		id:      "query-gates-numeric",
		labels:  []string{"Query type", "Run", "Baseline", "Format", "Numeric", "Keys", "Run labels", "Test name"},
		values:  map[string]string{"Query type": "Gates", "Run": "Latest run", "Baseline": "No baseline", "Keys": "", "Test name": "nightly"},
		checked: []string{"Numeric", "Run labels"},
		hidden:  []string{"Candidate", "Align", "Scope"},
		texts:   []string{"Gate verdicts of one stored run"},
	},
	{
		id:      "query-ladder",
		labels:  []string{"Query type", "Run", "Format", "Table", "Numeric"},
		values:  map[string]string{"Query type": "Ladder", "Run": sweep4k},
		checked: []string{"Table"},
		hidden:  []string{"Keys", "Run labels", "Test name", "Scope"},
		texts:   []string{"Load steps of a ladder run"},
	},
	{
		id:     "query-freshness",
		labels: []string{"Query type"},
		values: map[string]string{"Query type": "Freshness"},
		hidden: []string{"Run", "Test name", "Tag", "Keys"},
		texts:  []string{"hours since the newest stored run", "Ignores the dashboard time range"},
	},
	{
		id:        "query-run-picker",
		labels:    []string{"Query type", "Run"},
		values:    map[string]string{"Query type": "Packing", "Run": sweep1k},
		menu:      "Run",
		menuTexts: []string{"Dashboard time range", "Latest run", "$run", "$test", newest, sweep4k, sweep1k, sweep1kID},
		catalog:   "screenshot-run-picker.png",
	},
	{
		id:        "query-runs-error",
		labels:    []string{"Query type", "Run"},
		values:    map[string]string{"Query type": "Packing", "Run": "Dashboard time range"},
		menu:      "Run",
		menuTexts: []string{"Dashboard time range", "Latest run", runsError},
	},
	{
		id:      "variable-runs",
		labels:  []string{"List", "Runs", "Test names", "Test name", "Tag"},
		values:  map[string]string{"Test name": "sweep-1k", "Tag": ""},
		checked: []string{"Runs"},
	},
	{
		id:      "variable-tests",
		labels:  []string{"List", "Runs", "Test names"},
		checked: []string{"Test names"},
		hidden:  []string{"Test name", "Tag"},
	},
	{
		id:      "annotation",
		labels:  []string{"Run", "Test name", "Tag", "Ladder steps"},
		values:  map[string]string{"Run": "Dashboard time range", "Test name": "sweep-1k", "Tag": ""},
		hidden:  []string{"Query type"},
		texts:   []string{"Marks each run (start to end, titled test name and tag)"},
		catalog: "screenshot-annotations.png",
	},
	{
		id:      "annotation-change-points",
		labels:  []string{"Run", "Test name", "Tag", "Ladder steps", "Change points"},
		values:  map[string]string{"Run": "Dashboard time range", "Test name": "nightly"},
		checked: []string{"Change points"},
		hidden:  []string{"Query type"},
	},
}

// queryCase is a QueryEditor state with the query type's label, the run
// shown, a part of the type's description, and (for the types that take
// them) the test-name and tag filters.
func queryCase(id, typeLabel, run, description string, filters map[string]string) galleryCase {
	c := galleryCase{
		id:     id,
		labels: []string{"Query type", "Run"},
		values: map[string]string{"Query type": typeLabel, "Run": run},
		hidden: []string{"Scope", "Resource", "Block"},
		texts:  []string{description},
	}
	if filters == nil {
		c.hidden = append(c.hidden, "Test name", "Tag")
	}
	for k, v := range filters {
		c.labels = append(c.labels, k)
		c.values[k] = v
	}
	return c
}
