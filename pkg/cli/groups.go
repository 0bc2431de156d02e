// Package cli holds what the density subcommands share of their command
// lines, declared once: the flag groups (Prometheus, Kubernetes, results
// store), the --no-X negations of the switches that default to on, and the
// mapping of flags to the environment variables mage reads instead.
package cli

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/substrate/density/pkg/promql"
)

// Defaults of the Prometheus group: promql's client defaults.
const (
	DefaultMaxConcurrency = promql.DefaultMaxInFlight
	DefaultMaxResponseMB  = promql.DefaultMaxResponseBytes >> 20
)

// Prometheus is the flag group of the commands that read Prometheus. A nil
// field leaves its flag out (the command has no use for it).
type Prometheus struct {
	URL             *string
	Headers         *[]string
	BearerTokenFile *string
	Timeout         *time.Duration
	MaxConcurrency  *int
	MaxResponseMB   *int

	// DefaultURL is the default of --prometheus-url; URLUsage, when set,
	// says what the command does with it instead of the generic text.
	DefaultURL, URLUsage string
}

// AddTo declares the group's flags on fs.
func (p Prometheus) AddTo(fs *pflag.FlagSet) {
	if p.URL != nil {
		fs.StringVar(p.URL, "prometheus-url", p.DefaultURL, orDefault(p.URLUsage, "Prometheus (or compatible) base URL"))
	}
	if p.Headers != nil {
		fs.Var((*HeaderList)(p.Headers), "header", "extra HTTP header 'Name: value' on every Prometheus request (repeatable), e.g. X-Scope-OrgID")
	}
	if p.BearerTokenFile != nil {
		fs.StringVar(p.BearerTokenFile, "bearer-token-file", "", "file holding a bearer token for Prometheus (or set PROMETHEUS_BEARER_TOKEN)")
	}
	if p.Timeout != nil {
		fs.DurationVar(p.Timeout, "timeout", 0, "timeout of each Prometheus request (default 5s instant, 8s range) and Kubernetes call (5s)")
	}
	if p.MaxConcurrency != nil {
		fs.IntVar(p.MaxConcurrency, "max-concurrency", DefaultMaxConcurrency, "Prometheus requests in flight at most")
	}
	if p.MaxResponseMB != nil {
		fs.IntVar(p.MaxResponseMB, "max-response-mb", DefaultMaxResponseMB, "largest Prometheus answer read, in MiB (long reads are cut far below it)")
	}
	groupDeclared(fs, GroupPrometheus, "prometheus-url", "header", "bearer-token-file", "timeout", "max-concurrency", "max-response-mb")
}

// Kubernetes is the flag group of the commands that read the cluster.
type Kubernetes struct {
	ClusterFacts *bool
	Kubeconfig   *string
	Context      *string
}

// AddTo declares the group's flags on fs.
func (k Kubernetes) AddTo(fs *pflag.FlagSet) {
	if k.ClusterFacts != nil {
		fs.BoolVar(k.ClusterFacts, "cluster-facts", true, "read cluster facts from Kubernetes (--cluster-facts=false or --no-cluster-facts makes no Kubernetes call)")
	}
	if k.Kubeconfig != nil {
		fs.StringVar(k.Kubeconfig, "kubeconfig", "", "kubeconfig path (default in-cluster, then $KUBECONFIG or ~/.kube/config)")
	}
	if k.Context != nil {
		fs.StringVar(k.Context, "context", "", "kubeconfig context")
	}
	groupDeclared(fs, GroupKubernetes, "cluster-facts", "kubeconfig", "context")
}

// Store is the flag group of the commands that read runs from a results
// store.
type Store struct {
	Store *string
	Run   *string

	// DefaultStore is the default of --store (mage-like commands take it
	// from $STORE); StoreUsage, when set, replaces the generic text.
	DefaultStore, StoreUsage string
}

// AddTo declares the group's flags on fs.
func (s Store) AddTo(fs *pflag.FlagSet) {
	if s.Store != nil {
		usage := "results store URL (file://, gs://, s3://, azblob://)"
		if s.Run != nil {
			usage += ", with --run"
		}
		fs.StringVar(s.Store, "store", s.DefaultStore, orDefault(s.StoreUsage, usage))
	}
	if s.Run != nil {
		fs.StringVar(s.Run, "run", "", "run id in the results store: <test_name>/<run_ts>/<tag>, or latest")
	}
	groupDeclared(fs, GroupRun, "store", "run")
}

// groupDeclared puts those of the named flags that fs declares in group.
func groupDeclared(fs *pflag.FlagSet, group string, names ...string) {
	for _, n := range names {
		if fs.Lookup(n) != nil {
			SetGroup(fs, group, n)
		}
	}
}

func orDefault(s, def string) string {
	if s != "" {
		return s
	}
	return def
}
