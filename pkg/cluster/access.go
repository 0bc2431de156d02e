package cluster

import (
	"errors"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/substrate/density/pkg/endpoint"
)

// Access modes (the datasource's `kubernetesAccess` values). The empty mode
// is the CLI default: in-cluster credentials first, then a kubeconfig.
const (
	ModeAuto       = ""
	ModeOff        = "off"
	ModeInCluster  = "inCluster"
	ModeKubeconfig = "kubeconfig"
	ModeToken      = "token"
)

// DefaultTimeout bounds every Kubernetes call when no timeout is configured.
const DefaultTimeout = 5 * time.Second

// ErrOff is returned by NewClient when discovery is switched off; callers
// then pass a nil client to Discover, which makes no call at all.
var ErrOff = errors.New("cluster facts are switched off")

// Access says how to reach the Kubernetes API.
type Access struct {
	// Mode is one of the Mode* constants.
	Mode string
	// KubeconfigPath and Context select a kubeconfig file and context
	// (empty path: $KUBECONFIG, then ~/.kube/config; empty context: the
	// file's current context).
	KubeconfigPath, Context string
	// Kubeconfig is a pasted kubeconfig (datasource secure setting), used
	// in kubeconfig mode when KubeconfigPath is empty.
	//
	// ModeKubeconfig is the datasource's mode: the kubeconfig, pasted or
	// by path, must be self-contained (exec and auth-provider plugins,
	// token, certificate and key files are refused), so a datasource
	// setting never runs a program or reads another file on the Grafana
	// server. ModeAuto (the CLI's) loads a kubeconfig as kubectl does,
	// exec plugins included: it runs on an operator's own machine.
	Kubeconfig []byte
	// URL, Token and CACert (PEM) are for token mode; an empty CACert uses
	// the system roots.
	URL, Token string
	CACert     []byte
	// Timeout is the HTTP client timeout of every request (default 5 s).
	Timeout time.Duration
}

// NewClient builds a clientset for a. Mode off returns ErrOff without
// touching the network or the filesystem.
func NewClient(a Access) (kubernetes.Interface, error) {
	cfg, err := RESTConfig(a)
	if err != nil {
		return nil, err
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building Kubernetes client: %w", err)
	}
	return c, nil
}

// RESTConfig resolves a into a client-go configuration (exported for the
// real-apiserver harness and the health check).
func RESTConfig(a Access) (*rest.Config, error) {
	var (
		cfg *rest.Config
		err error
	)
	switch a.Mode {
	case ModeOff:
		return nil, ErrOff
	case ModeAuto:
		cfg, err = rest.InClusterConfig()
		if err != nil {
			inErr := err
			cfg, err = kubeconfigFile(a.KubeconfigPath, a.Context)
			if err != nil {
				return nil, fmt.Errorf("no Kubernetes credentials: in-cluster: %v; kubeconfig: %w", inErr, err)
			}
		}
	case ModeInCluster:
		cfg, err = rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("reading in-cluster Kubernetes credentials: %w", err)
		}
	case ModeKubeconfig:
		cfg, err = selfContainedKubeconfig(a.KubeconfigPath, a.Kubeconfig, a.Context)
		if err != nil {
			return nil, err
		}
	case ModeToken:
		cfg, err = tokenConfig(a.URL, a.Token, a.CACert)
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown Kubernetes access mode %q (want off, inCluster, kubeconfig or token)", a.Mode)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = a.Timeout
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	// Pagination is strictly sequential, so client-side throttling only
	// adds latency: 5 QPS (client-go's default) would stretch a
	// 200-page list of a large cluster to 40 s.
	cfg.QPS, cfg.Burst = 50, 100
	// Protobuf decodes several times faster than JSON for large pod
	// lists; servers that only speak JSON (test servers) still work.
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	if cfg.UserAgent == "" {
		cfg.UserAgent = "substrate-density"
	}
	return cfg, nil
}

func kubeconfigFile(path, context string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if path != "" {
		rules.ExplicitPath = path
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		where := path
		if where == "" {
			where = "$KUBECONFIG or ~/.kube/config"
		}
		return nil, fmt.Errorf("loading kubeconfig %s: %w", where, err)
	}
	return cfg, nil
}

// selfContainedKubeconfig loads the datasource's kubeconfig (the file at
// path, else the pasted data, else the default loading rules) and refuses it
// unless it is self-contained.
func selfContainedKubeconfig(path string, pasted []byte, context string) (*rest.Config, error) {
	var (
		raw  *clientcmdapi.Config
		what string
	)
	switch {
	case path != "":
		what = "kubeconfig " + path
		data, err := os.ReadFile(path) // #nosec G304 -- kubeconfigPath, named by the datasource's editor; held to the self-contained rule below
		if err != nil {
			return nil, fmt.Errorf("loading %s: %w", what, err)
		}
		if raw, err = clientcmd.Load(data); err != nil {
			// Never echo the input: it holds credentials.
			return nil, fmt.Errorf("loading %s: not a valid kubeconfig", what)
		}
	case len(pasted) > 0:
		what = "pasted kubeconfig"
		var err error
		if raw, err = clientcmd.Load(pasted); err != nil {
			return nil, errors.New("parsing the pasted kubeconfig: not a valid kubeconfig")
		}
	default:
		what = "kubeconfig $KUBECONFIG or ~/.kube/config"
		var err error
		if raw, err = clientcmd.NewDefaultClientConfigLoadingRules().Load(); err != nil {
			return nil, fmt.Errorf("loading %s: %w", what, err)
		}
	}
	if err := selfContained(raw); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw, context, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("using the %s: %w", what, err)
	}
	return cfg, nil
}

// selfContained refuses what would make a datasource setting execute or
// read something on the host.
func selfContained(c *clientcmdapi.Config) error {
	for name, u := range c.AuthInfos {
		switch {
		case u.Exec != nil:
			return fmt.Errorf("user %q uses an exec credential plugin, which is not allowed here; use a token or inline client certificate", name)
		case u.AuthProvider != nil:
			return fmt.Errorf("user %q uses an auth-provider plugin, which is not allowed here; use a token or inline client certificate", name)
		case u.ClientCertificate != "" || u.ClientKey != "" || u.TokenFile != "":
			return fmt.Errorf("user %q refers to files; inline the data (client-certificate-data, client-key-data, token)", name)
		}
	}
	for name, cl := range c.Clusters {
		if cl.CertificateAuthority != "" {
			return fmt.Errorf("cluster %q refers to a CA file; inline it as certificate-authority-data", name)
		}
	}
	return nil
}

func tokenConfig(rawURL, token string, ca []byte) (*rest.Config, error) {
	if rawURL == "" {
		return nil, errors.New("token access needs the Kubernetes API URL")
	}
	if !endpoint.IsHTTP(rawURL) {
		return nil, fmt.Errorf("token access: Kubernetes API URL %q is not an http(s) URL", endpoint.Redact(rawURL))
	}
	if token == "" {
		return nil, errors.New("token access needs a bearer token")
	}
	return &rest.Config{
		Host:            rawURL,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca},
	}, nil
}
