package schema

// KubernetesAccess is how the datasource reaches Kubernetes.
// +enum
type KubernetesAccess string

const (
	// No Kubernetes calls; cluster facts of live runs are null
	KubernetesOff KubernetesAccess = "off"
	// The Grafana pod's service account
	KubernetesInCluster KubernetesAccess = "inCluster"
	// A kubeconfig file on the Grafana server (kubeconfigPath), or pasted (secure kubeconfig)
	KubernetesKubeconfig KubernetesAccess = "kubeconfig"
	// kubernetesURL (https) and the secure kubernetesToken
	KubernetesToken KubernetesAccess = "token"
)

// JSONData is the jsonData of a datasource instance (datasource.md "Fixed
// names"). Every key is optional: an unset key takes the default. Numbers
// may also be given as numeric strings (older provisioning files).
type JSONData struct {
	// Results store URL: an absolute path, file://, gs://, s3:// or azblob://
	ResultsStore string `json:"resultsStore,omitempty"`
	// Read a stored run's numbers from its artifacts; false forces the harvest
	PreferStored *bool `json:"preferStored,omitempty" jsonschema:"default=true"`
	// Discover runs from the user-count series in Prometheus
	DiscoverRuns *bool `json:"discoverRuns,omitempty" jsonschema:"default=true"`
	// PromQL for the number of simulated users
	UserCountQuery string `json:"userCountQuery,omitempty" jsonschema:"default=sum(locust_users)"`
	// Longest stretch at 0 users inside one run, in seconds
	RunGapSeconds int64 `json:"runGapSeconds,omitempty" jsonschema:"minimum=0,default=120"`
	// How late atelet metrics reach Prometheus, in seconds
	AteletLagSeconds int64 `json:"ateletLagSeconds,omitempty" jsonschema:"minimum=0,default=70"`
	// Per Prometheus request, in seconds; unset: 5 s instant, 8 s range
	TimeoutSeconds int64 `json:"timeoutSeconds,omitempty" jsonschema:"minimum=0"`
	// Prometheus requests one datasource runs at once
	MaxConcurrentQueries int64 `json:"maxConcurrentQueries,omitempty" jsonschema:"minimum=0,default=8"`
	// Worker pool name (label ate.dev/worker-pool)
	WorkerPool string `json:"workerPool,omitempty" jsonschema:"default=benchmark-ateom"`
	// Namespace of the worker pods
	WorkerNamespace string `json:"workerNamespace,omitempty" jsonschema:"default=benchmark-workloads"`
	// Container name of the workers
	WorkerContainer string `json:"workerContainer,omitempty" jsonschema:"default=ateom"`
	// RE2 matched against worker pod names
	WorkerPodRegex string `json:"workerPodRegex,omitempty" jsonschema:"default=benchmark-ateom.*"`
	// Namespace of the atelet pods
	AteletNamespace string `json:"ateletNamespace,omitempty" jsonschema:"default=ate-system"`
	// Container name of the atelets
	AteletContainer string `json:"ateletContainer,omitempty" jsonschema:"default=atelet"`
	// How the datasource reaches Kubernetes
	KubernetesAccess KubernetesAccess `json:"kubernetesAccess,omitempty" jsonschema:"default=off"`
	// A self-contained kubeconfig file on the Grafana server (kubeconfig mode)
	KubeconfigPath string `json:"kubeconfigPath,omitempty"`
	// Context in the kubeconfig; empty: its current-context
	KubeContext string `json:"kubeContext,omitempty"`
	// The Kubernetes API server, https:// only (token mode)
	KubernetesURL string `json:"kubernetesURL,omitempty"`
	// Read the live cluster only for runs that ended less than this long ago, in seconds
	LiveFactsMaxAgeSeconds int64 `json:"liveFactsMaxAgeSeconds,omitempty" jsonschema:"minimum=0,default=3600"`
	// Harvested blocks of finished runs kept in memory
	CacheEntries int64 `json:"cacheEntries,omitempty" jsonschema:"minimum=0,default=256"`
	// Largest Prometheus response body read, in bytes
	MaxResponseBytes int64 `json:"maxResponseBytes,omitempty" jsonschema:"minimum=0,default=67108864"`
	// Longest dashboard range read from Prometheus, in days
	MaxRangeDays int64 `json:"maxRangeDays,omitempty" jsonschema:"minimum=0,default=31"`
	// Stored runs one query reads; of more, the newest
	MaxRunsPerQuery int64 `json:"maxRunsPerQuery,omitempty" jsonschema:"minimum=0,default=2000"`
	// Parsed rows of stored runs kept per datasource, in MiB; 0 keeps none
	StoredRunCacheMiB int64 `json:"storedRunCacheMiB,omitempty" jsonschema:"minimum=0,default=256"`
	// Per-node or per-pod series a panel shows before it shows bands
	MaxSeries int64 `json:"maxSeries,omitempty" jsonschema:"minimum=0,default=50"`
	// Series with the highest peak shown with the bands
	TopSeries int64 `json:"topSeries,omitempty" jsonschema:"minimum=0,default=10"`
	// A gates file (YAML) the gates query evaluates
	Gates string `json:"gates,omitempty"`
	// A ladder profile (YAML list of {key, query, reduce}) replacing the built-in one
	LadderProfile string `json:"ladderProfile,omitempty"`
	// Change-point acknowledgements (YAML list of {key, run, reason}), added to the store's acks.yaml
	Acks string `json:"acks,omitempty"`
	// The Grafana uid of a Prometheus datasource for Explore links from runs; empty: no Explore links
	ExploreDatasourceUID string `json:"exploreDatasourceUid,omitempty"`
	// Custom header name 1 (e.g. X-Scope-OrgID); its value is the secure httpHeaderValue1, and so on for 2, 3, …
	HTTPHeaderName1 string `json:"httpHeaderName1,omitempty"`
	// Authenticate to Prometheus with a TLS client certificate
	TLSAuth bool `json:"tlsAuth,omitempty"`
	// Verify Prometheus with the secure tlsCACert
	TLSAuthWithCACert bool `json:"tlsAuthWithCACert,omitempty"`
	// Skip TLS verification of Prometheus
	TLSSkipVerify bool `json:"tlsSkipVerify,omitempty"`
	// Server name for TLS verification
	ServerName string `json:"serverName,omitempty"`
}

// SecureValue is one secureJsonData key: named here, never valued.
type SecureValue struct {
	Key, Description string
}

// SecureValues lists the secureJsonData keys (datasource.md "Fixed names").
func SecureValues() []SecureValue {
	return []SecureValue{
		{"basicAuthPassword", "Prometheus basic-auth password (with basicAuth and basicAuthUser)"},
		{"bearerToken", "Prometheus bearer token, sent as Authorization: Bearer"},
		{"httpHeaderValue1", "Value of custom header 1 (httpHeaderName1), and so on for 2, 3, …"},
		{"tlsCACert", "PEM of Prometheus's CA"},
		{"tlsClientCert", "PEM of the TLS client certificate"},
		{"tlsClientKey", "PEM of the TLS client key"},
		{"kubeconfig", "A pasted kubeconfig (kubeconfig mode without kubeconfigPath); inline data only"},
		{"kubernetesToken", "Service-account token (token mode)"},
		{"kubernetesCACert", "PEM of the Kubernetes API server's CA (token mode)"},
	}
}
