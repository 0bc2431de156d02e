package plugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/substrate/density/pkg/cluster"
	"github.com/substrate/density/pkg/endpoint"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/promql"
	"github.com/substrate/density/pkg/runs"
	"github.com/substrate/density/pkg/verdicts"
)

// Defaults of the jsonData settings (datasource.md "Fixed names"). The
// selectors, the atelet lag, the run discovery and the Prometheus client
// limits take their defaults from the engine's packages (harvest, runs,
// promql).
const (
	DefaultLiveFactsMaxAgeSecs = 3600
	DefaultCacheEntries        = 256
	DefaultMaxSeries           = 50
	DefaultTopSeries           = 10
	DefaultMaxRangeDays        = 31
	DefaultMaxRunsPerQuery     = 2000
	// DefaultStoredRunCacheMiB bounds the parsed rows of stored runs one
	// datasource instance keeps (datasource.md "Caching").
	DefaultStoredRunCacheMiB = 256
)

// Sentinel settings errors. Each names the setting so the health check and a
// failing query can tell the user exactly what to fix.
var (
	ErrInvalidJSONData   = errors.New("the datasource settings (jsonData) are not valid JSON")
	ErrMissingURL        = errors.New("the Prometheus URL is empty: set the datasource URL")
	ErrInvalidURL        = errors.New("the Prometheus URL is not a valid http(s) URL")
	ErrInvalidStoreURL   = errors.New("resultsStore is not a supported URL (file://, gs://, s3://, azblob:// or an absolute path)")
	ErrInvalidNumber     = errors.New("a numeric setting is not a valid non-negative number")
	ErrInvalidPodRegex   = errors.New("workerPodRegex is not a valid regular expression")
	ErrInvalidKubeAccess = errors.New("kubernetesAccess must be off, inCluster, kubeconfig or token")
	ErrMissingKubeconfig = errors.New("kubernetesAccess is kubeconfig but neither kubeconfigPath nor a pasted kubeconfig is set")
	ErrMissingKubeToken  = errors.New("kubernetesAccess is token but kubernetesURL or the kubernetesToken secret is missing")
	ErrKubeURLNotHTTPS   = errors.New("kubernetesAccess is token: kubernetesURL must be an https:// URL (the service-account token is never sent in clear text)")
	ErrInvalidAcks       = errors.New("acks is not a valid acknowledgements file (a YAML list of {key, run, reason})")
	ErrInvalidExploreUID = errors.New("exploreDatasourceUid is not a Grafana datasource uid (letters, digits, - and _, at most 40)")
)

// Settings is one datasource instance's validated configuration. Secrets
// live only in the HTTP client options and the Kube fields; String() and the
// JSON form never show them.
type Settings struct {
	// PrometheusURL is the datasource's own url.
	PrometheusURL string
	// Timeout overrides both the instant and range request timeouts when > 0.
	Timeout              time.Duration
	MaxConcurrentQueries int

	ResultsStore   string
	DiscoverRuns   bool
	UserCountQuery string
	RunGapSeconds  int64

	AteletLagSeconds int64
	WorkerPool       string
	WorkerNamespace  string
	WorkerContainer  string
	WorkerPodRegex   string
	AteletNamespace  string
	AteletContainer  string

	Kube Kube

	LiveFactsMaxAgeSeconds int64
	CacheEntries           int
	MaxResponseBytes       int64
	// MaxRangeDays bounds every Prometheus read the dashboard range drives
	// (an ad hoc run's window, run discovery); MaxRunsPerQuery the stored
	// runs one query reads.
	MaxRangeDays    int64
	MaxRunsPerQuery int
	// StoredRunCacheMiB bounds the stored-run cache: the parsed rows of
	// finished stored runs, read once and shared by every query type.
	StoredRunCacheMiB int64
	// PreferStored reads a stored run's numbers from its artifacts (the
	// default); false forces the harvest, e.g. to check an artifact.
	PreferStored bool
	// MaxSeries is the most per-node or per-pod series a panel gets before
	// it shows distribution bands and the TopSeries series instead.
	MaxSeries, TopSeries int

	// Gates is the text of a gates file (verdicts.md) for the `gates`
	// query; it is parsed by the query, so a bad file fails only that query.
	Gates string
	// LadderProfile is the YAML of a ladder profile (ladder-steps.md)
	// replacing the built-in one when a ladder is evaluated from a stored
	// run's logs.txt; parsed by the query, like Gates.
	LadderProfile string
	// Acks is the text of an acks file (verdicts.md) that `changePoints`
	// adds to the store's acks.yaml of the test; it is checked on load,
	// since it applies to every change-point query.
	Acks string
	// ExploreDatasourceUID is the Grafana uid of a Prometheus datasource
	// that run links open Explore on ("": no Explore link).
	ExploreDatasourceUID string
}

// Kube is the Kubernetes access configuration. Kubeconfig, Token and CACert
// are secrets.
type Kube struct {
	Access     string // one of cluster.ModeOff, ModeInCluster, ModeKubeconfig, ModeToken
	ConfigPath string
	Context    string
	URL        string
	Kubeconfig string `json:"-"`
	Token      string `json:"-"`
	CACert     string `json:"-"`
}

// jsonData mirrors the jsonData keys. Numbers are flexNumbers because
// provisioning files and older editors store them as strings.
type jsonData struct {
	ResultsStore           string     `json:"resultsStore"`
	DiscoverRuns           *bool      `json:"discoverRuns"`
	UserCountQuery         string     `json:"userCountQuery"`
	RunGapSeconds          flexNumber `json:"runGapSeconds"`
	AteletLagSeconds       flexNumber `json:"ateletLagSeconds"`
	TimeoutSeconds         flexNumber `json:"timeoutSeconds"`
	MaxConcurrentQueries   flexNumber `json:"maxConcurrentQueries"`
	WorkerPool             string     `json:"workerPool"`
	WorkerNamespace        string     `json:"workerNamespace"`
	WorkerContainer        string     `json:"workerContainer"`
	WorkerPodRegex         string     `json:"workerPodRegex"`
	AteletNamespace        string     `json:"ateletNamespace"`
	AteletContainer        string     `json:"ateletContainer"`
	KubernetesAccess       string     `json:"kubernetesAccess"`
	KubeconfigPath         string     `json:"kubeconfigPath"`
	KubeContext            string     `json:"kubeContext"`
	KubernetesURL          string     `json:"kubernetesURL"`
	LiveFactsMaxAgeSeconds flexNumber `json:"liveFactsMaxAgeSeconds"`
	CacheEntries           flexNumber `json:"cacheEntries"`
	MaxResponseBytes       flexNumber `json:"maxResponseBytes"`
	MaxRangeDays           flexNumber `json:"maxRangeDays"`
	MaxRunsPerQuery        flexNumber `json:"maxRunsPerQuery"`
	StoredRunCacheMiB      flexNumber `json:"storedRunCacheMiB"`
	PreferStored           *bool      `json:"preferStored"`
	MaxSeries              flexNumber `json:"maxSeries"`
	TopSeries              flexNumber `json:"topSeries"`
	Gates                  string     `json:"gates"`
	LadderProfile          string     `json:"ladderProfile"`
	Acks                   string     `json:"acks"`
	ExploreDatasourceUID   string     `json:"exploreDatasourceUid"`
}

// flexNumber accepts a JSON number, a numeric string, "" or null. set is
// false for absent, null and "" so the default applies.
type flexNumber struct {
	v   float64
	set bool
	raw string
}

func (n *flexNumber) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		return nil
	}
	if strings.HasPrefix(s, `"`) {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		s = strings.TrimSpace(str)
		if s == "" {
			return nil
		}
	}
	n.raw = s
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		// Kept for a named validation error instead of a JSON one.
		n.set = true
		n.v = -1
		return nil
	}
	n.v, n.set = f, true
	return nil
}

// int64Or validates a non-negative whole number and returns def when unset.
func (n flexNumber) int64Or(name string, def int64) (int64, error) {
	if !n.set {
		return def, nil
	}
	if n.v < 0 || n.v != float64(int64(n.v)) {
		return 0, fmt.Errorf("%w: %s = %q", ErrInvalidNumber, name, n.raw)
	}
	return int64(n.v), nil
}

// LoadSettings parses and validates an instance's settings, applying the
// defaults. The returned error wraps one of the sentinel errors above.
func LoadSettings(s backend.DataSourceInstanceSettings) (Settings, error) {
	jd, err := parseJSONData(s.JSONData)
	if err != nil {
		return Settings{}, err
	}
	out := settingsWithDefaults(jd, s.URL, s.DecryptedSecureJSONData)
	if err := out.validateURLs(); err != nil {
		return Settings{}, err
	}
	if err := out.applyNumbers(jd); err != nil {
		return Settings{}, err
	}
	if err := out.validate(); err != nil {
		return Settings{}, err
	}
	return out, nil
}

// parseJSONData reads the jsonData keys; empty jsonData is all defaults.
func parseJSONData(raw []byte) (jsonData, error) {
	var jd jsonData
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &jd); err != nil {
			return jsonData{}, fmt.Errorf("%w: %v", ErrInvalidJSONData, err)
		}
	}
	return jd, nil
}

// settingsWithDefaults fills the text and switch settings, each from its
// key or its default, and the Kubernetes access with its secure fields.
func settingsWithDefaults(jd jsonData, promURL string, secure map[string]string) Settings {
	sel := harvest.DefaultSelectors()
	return Settings{
		PrometheusURL:        strings.TrimSpace(promURL),
		ResultsStore:         strings.TrimSpace(jd.ResultsStore),
		Gates:                jd.Gates,
		LadderProfile:        jd.LadderProfile,
		Acks:                 jd.Acks,
		DiscoverRuns:         jd.DiscoverRuns == nil || *jd.DiscoverRuns,
		PreferStored:         jd.PreferStored == nil || *jd.PreferStored,
		UserCountQuery:       orDefault(jd.UserCountQuery, runs.DefaultUserCountQuery),
		WorkerPool:           orDefault(jd.WorkerPool, sel.WorkerPool),
		WorkerNamespace:      orDefault(jd.WorkerNamespace, sel.WorkerNamespace),
		WorkerContainer:      orDefault(jd.WorkerContainer, sel.WorkerContainer),
		WorkerPodRegex:       orDefault(jd.WorkerPodRegex, sel.WorkerPodRegex),
		AteletNamespace:      orDefault(jd.AteletNamespace, sel.AteletNamespace),
		AteletContainer:      orDefault(jd.AteletContainer, sel.AteletContainer),
		Kube:                 kubeSettings(jd, secure),
		ExploreDatasourceUID: strings.TrimSpace(jd.ExploreDatasourceUID),
	}
}

// kubeSettings is the Kubernetes access: its jsonData keys and the
// kubeconfig, token and CA certificate from the secure settings.
func kubeSettings(jd jsonData, secure map[string]string) Kube {
	return Kube{
		Access:     orDefault(jd.KubernetesAccess, cluster.ModeOff),
		ConfigPath: strings.TrimSpace(jd.KubeconfigPath),
		Context:    strings.TrimSpace(jd.KubeContext),
		URL:        strings.TrimSpace(jd.KubernetesURL),
		Kubeconfig: secure["kubeconfig"],
		Token:      secure["kubernetesToken"],
		CACert:     secure["kubernetesCACert"],
	}
}

// validateURLs checks the Prometheus URL and, when set, the results store.
func (s Settings) validateURLs() error {
	if err := validatePrometheusURL(s.PrometheusURL); err != nil {
		return err
	}
	if s.ResultsStore != "" {
		return validateStoreURL(s.ResultsStore)
	}
	return nil
}

// applyNumbers reads the numeric settings in key order (the first invalid
// one is the error), then applies the lower bounds.
func (s *Settings) applyNumbers(jd jsonData) error {
	var timeout, mc, ce, ms, ts, mr int64
	nums := []struct {
		name string
		n    flexNumber
		def  int64
		dst  *int64
	}{
		{"runGapSeconds", jd.RunGapSeconds, runs.DefaultRunGap, &s.RunGapSeconds},
		{"ateletLagSeconds", jd.AteletLagSeconds, harvest.DefaultLagS, &s.AteletLagSeconds},
		{"liveFactsMaxAgeSeconds", jd.LiveFactsMaxAgeSeconds, DefaultLiveFactsMaxAgeSecs, &s.LiveFactsMaxAgeSeconds},
		{"maxResponseBytes", jd.MaxResponseBytes, promql.DefaultMaxResponseBytes, &s.MaxResponseBytes},
		{"maxRangeDays", jd.MaxRangeDays, DefaultMaxRangeDays, &s.MaxRangeDays},
		{"timeoutSeconds", jd.TimeoutSeconds, 0, &timeout},
		{"maxConcurrentQueries", jd.MaxConcurrentQueries, promql.DefaultMaxInFlight, &mc},
		{"cacheEntries", jd.CacheEntries, DefaultCacheEntries, &ce},
		{"maxSeries", jd.MaxSeries, DefaultMaxSeries, &ms},
		{"topSeries", jd.TopSeries, DefaultTopSeries, &ts},
		{"maxRunsPerQuery", jd.MaxRunsPerQuery, DefaultMaxRunsPerQuery, &mr},
		// 0 keeps nothing (every query reads its runs again).
		{"storedRunCacheMiB", jd.StoredRunCacheMiB, DefaultStoredRunCacheMiB, &s.StoredRunCacheMiB},
	}
	for _, n := range nums {
		v, err := n.n.int64Or(n.name, n.def)
		if err != nil {
			return err
		}
		*n.dst = v
	}
	s.Timeout = time.Duration(timeout) * time.Second
	s.MaxRunsPerQuery = int(mr)
	s.MaxSeries, s.TopSeries = max(1, int(ms)), max(1, int(ts))
	// 0 would deadlock the limiter; 0 cache entries means "no cache".
	s.MaxConcurrentQueries, s.CacheEntries = max(1, int(mc)), int(ce)
	s.applyZeroDefaults()
	return nil
}

// applyZeroDefaults replaces the limits where 0 would refuse every read.
func (s *Settings) applyZeroDefaults() {
	if s.MaxResponseBytes == 0 {
		s.MaxResponseBytes = promql.DefaultMaxResponseBytes
	}
	if s.MaxRangeDays == 0 {
		s.MaxRangeDays = DefaultMaxRangeDays
	}
	if s.MaxRunsPerQuery == 0 {
		s.MaxRunsPerQuery = DefaultMaxRunsPerQuery
	}
}

// validate checks the settings parsed as text: the pod regex, the
// Kubernetes access, the acks file and the Explore datasource uid.
func (s Settings) validate() error {
	if _, err := regexp.Compile(s.WorkerPodRegex); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidPodRegex, err)
	}
	if err := s.Kube.validate(); err != nil {
		return err
	}
	if _, err := verdicts.ParseAcks([]byte(s.Acks)); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidAcks, err)
	}
	if u := s.ExploreDatasourceUID; u != "" && !grafanaUID.MatchString(u) {
		return fmt.Errorf("%w: %q", ErrInvalidExploreUID, u)
	}
	return nil
}

func (k Kube) validate() error {
	switch k.Access {
	case cluster.ModeOff, cluster.ModeInCluster:
	case cluster.ModeKubeconfig:
		if k.ConfigPath == "" && strings.TrimSpace(k.Kubeconfig) == "" {
			return ErrMissingKubeconfig
		}
	case cluster.ModeToken:
		if k.URL == "" || k.Token == "" {
			return ErrMissingKubeToken
		}
		// The token is a credential: client-go's own loader refuses it to a
		// server without TLS, and so does this setting.
		if u, err := url.Parse(k.URL); err != nil || u.Scheme != "https" || u.Host == "" {
			return fmt.Errorf("%w (got %s)", ErrKubeURLNotHTTPS, endpoint.Redact(k.URL))
		}
	default:
		return fmt.Errorf("%w (got %q)", ErrInvalidKubeAccess, k.Access)
	}
	return nil
}

func validatePrometheusURL(raw string) error {
	if raw == "" {
		return ErrMissingURL
	}
	if !endpoint.IsHTTP(raw) {
		// The raw URL may hold user:password; name only what is safe.
		return fmt.Errorf("%w (%s)", ErrInvalidURL, endpoint.Redact(raw))
	}
	return nil
}

func validateStoreURL(raw string) error {
	if strings.HasPrefix(raw, "/") {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w (%s)", ErrInvalidStoreURL, endpoint.Redact(raw))
	}
	if slices.Contains(runs.StoreSchemes(), u.Scheme) {
		return nil
	}
	return fmt.Errorf("%w (%s)", ErrInvalidStoreURL, endpoint.Redact(raw))
}

// URLHost returns the host part of a URL for health and error messages
// (never credentials).
func URLHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return endpoint.Redact(raw)
	}
	return u.Host
}

func orDefault(s, def string) string {
	if s = strings.TrimSpace(s); s == "" {
		return def
	}
	return s
}
