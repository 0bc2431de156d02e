// Package kubetest runs a real kube-apiserver, on Debian's etcd, for tests that
// need the API's true semantics: RBAC decisions, status subresources, label
// selectors, limit/continue pagination and the TokenRequest API.
//
// The binary is built once per machine by scripts/kube-apiserver.sh from the
// pinned tools module tools/kube and found through $KUBE_APISERVER or the cache
// path that script prints. When it is missing the tests fail with the command
// that builds it: they never skip, so a green run always means the real server
// answered.
//
// Startup takes ~5 s, so one server is shared by the tests of a test binary:
// Start counts references and the last t.Cleanup stops it. A package whose
// tests all use the server keeps it alive across tests with Main in TestMain.
// Because the server is shared, each test works in namespaces of its own
// (Cluster.Namespace) or in objects it names uniquely.
package kubetest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/substrate/density/internal/toolcache"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Environment variables read by Start.
const (
	// EnvAPIServer names the kube-apiserver binary; it overrides the cache path.
	EnvAPIServer = "KUBE_APISERVER"
	// EnvEtcd names the etcd binary (default: etcd on PATH, then /usr/bin/etcd).
	EnvEtcd = "ETCD"
	// EnvCache overrides the cache root shared with scripts/kube-apiserver.sh.
	EnvCache = toolcache.EnvCache
)

// BuildCommand is the command that builds (or finds) the cached binary; it is
// quoted in every failure to find one.
const BuildCommand = "bash scripts/kube-apiserver.sh"

// AdminUser is the user of AdminConfig, a member of system:masters.
const AdminUser = "kubetest-admin"

const (
	startTimeout = 2 * time.Minute // generous: the 2 cores are shared with builds
	stopTimeout  = 15 * time.Second
	callTimeout  = 30 * time.Second
)

// Cluster is a running etcd + kube-apiserver pair on 127.0.0.1.
type Cluster struct {
	url        string
	caData     []byte
	adminToken string
	dir        string
	etcd       *process
	apiserver  *process
}

// shared holds the one server of this test binary. It is the package's only
// mutable state, and exists because starting a server per test would cost ~5 s each.
var shared struct {
	mu      sync.Mutex
	refs    int
	cluster *Cluster
}

// Start returns the test binary's shared server, starting it on first use, and
// releases it in t.Cleanup (the last release stops it). It fails the test, with
// the command to run, when kube-apiserver or etcd is missing.
func Start(t testing.TB) *Cluster {
	t.Helper()
	c, err := acquire()
	if err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	t.Cleanup(func() {
		if err := release(); err != nil {
			t.Errorf("kubetest: %v", err)
		}
	})
	return c
}

// Main runs the tests of m holding one reference to the shared server, so that
// it starts at most once for the whole binary, and stops it afterwards. Use it
// as `func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }`. It starts
// nothing by itself: a run that selects no server test costs nothing.
func Main(m *testing.M) int {
	shared.mu.Lock()
	shared.refs++
	shared.mu.Unlock()
	code := m.Run()
	if err := release(); err != nil {
		fmt.Fprintf(os.Stderr, "kubetest: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

func acquire() (*Cluster, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.cluster == nil {
		c, err := start(context.Background())
		if err != nil {
			return nil, err
		}
		shared.cluster = c
	}
	shared.refs++
	return shared.cluster, nil
}

func release() error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.refs--
	if shared.refs > 0 || shared.cluster == nil {
		return nil
	}
	c := shared.cluster
	shared.cluster = nil
	return c.stop()
}

// URL is the https address of the API server.
func (c *Cluster) URL() string { return c.url }

// CAData is the PEM bundle that verifies the server's self-signed certificate.
func (c *Cluster) CAData() []byte { return append([]byte(nil), c.caData...) }

// AdminConfig authenticates as AdminUser (group system:masters: everything is
// allowed). Client-side rate limiting is off so tests can create thousands of
// objects quickly.
func (c *Cluster) AdminConfig() *rest.Config { return c.TokenConfig(c.adminToken) }

// TokenConfig authenticates with a bearer token, e.g. one from
// ServiceAccountToken; what it may do is decided by the server's RBAC.
func (c *Cluster) TokenConfig(token string) *rest.Config {
	return &rest.Config{
		Host:            c.url,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.CAData()},
		QPS:             -1, // no client-side limiter
		UserAgent:       "kubetest",
		Timeout:         callTimeout,
	}
}

// Admin is a clientset for AdminConfig.
func (c *Cluster) Admin(t testing.TB) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(c.AdminConfig())
	if err != nil {
		t.Fatalf("kubetest: admin clientset: %v", err)
	}
	return cs
}

// Namespace creates a namespace with a unique name starting with prefix and
// returns its name. Namespaces are not deleted: without a namespace controller
// they would stay Terminating, and the server is thrown away at the end.
func (c *Cluster) Namespace(t testing.TB, prefix string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	ns, err := c.Admin(t).CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubetest: creating namespace %s-*: %v", prefix, err)
	}
	return ns.Name
}

// EnsureNamespace creates the namespace name unless it exists.
func (c *Cluster) EnsureNamespace(t testing.TB, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if err := ensureNamespace(ctx, c.Admin(t), name); err != nil {
		t.Fatalf("kubetest: %v", err)
	}
}

func ensureNamespace(ctx context.Context, cs kubernetes.Interface, name string) error {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

// ServiceAccountToken creates the service account namespace/name unless it
// exists (and its namespace) and returns a one-hour token for it from the
// TokenRequest API: requests made with it are authorised as
// system:serviceaccount:<namespace>:<name> by RBAC.
func (c *Cluster) ServiceAccountToken(t testing.TB, namespace, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	cs := c.Admin(t)
	if err := ensureNamespace(ctx, cs, namespace); err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	_, err := cs.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("kubetest: creating service account %s/%s: %v", namespace, name, err)
	}
	expiry := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubetest: requesting a token for %s/%s: %v", namespace, name, err)
	}
	return tr.Status.Token
}

// ServiceAccountConfig is TokenConfig with a ServiceAccountToken.
func (c *Cluster) ServiceAccountConfig(t testing.TB, namespace, name string) *rest.Config {
	t.Helper()
	return c.TokenConfig(c.ServiceAccountToken(t, namespace, name))
}

// Kubeconfig writes a kubeconfig file for cfg (server, CA and bearer token)
// whose only context is named context, and returns its path, for code under
// test that reads a kubeconfig path and context.
func (c *Cluster) Kubeconfig(t testing.TB, cfg *rest.Config, context string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["kubetest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["kubetest"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts[context] = &clientcmdapi.Context{Cluster: "kubetest", AuthInfo: "kubetest"}
	kc.CurrentContext = context
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatalf("kubetest: writing kubeconfig: %v", err)
	}
	return path
}

// Apply server-side-applies every object of a multi-document YAML (or JSON)
// manifest as the admin, in document order, creating the namespaces that
// namespaced objects name when they are missing. Namespaced objects without a
// namespace go to "default". It returns the applied objects as the server
// stored them.
func (c *Cluster) Apply(t testing.TB, manifest []byte) []*unstructured.Unstructured {
	t.Helper()
	objs, err := c.apply(manifest)
	if err != nil {
		t.Fatalf("kubetest: applying manifest: %v", err)
	}
	return objs
}

func (c *Cluster) apply(manifest []byte) ([]*unstructured.Unstructured, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*callTimeout)
	defer cancel()
	cfg := c.AdminConfig()
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		return nil, fmt.Errorf("reading API groups: %w", err)
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("clientset: %w", err)
	}

	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	for doc := 1; ; doc++ {
		var obj unstructured.Unstructured
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("decoding document %d: %w", doc, err)
		}
		if len(obj.Object) == 0 {
			continue // empty document between separators
		}
		gvk := obj.GroupVersionKind()
		if gvk.Kind == "" || gvk.Version == "" {
			return nil, fmt.Errorf("document %d has no apiVersion/kind", doc)
		}
		m, err := mapper.RESTMapping(schema.GroupKind{Group: gvk.Group, Kind: gvk.Kind}, gvk.Version)
		if err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", doc, gvk, err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			if obj.GetNamespace() == "" {
				obj.SetNamespace(metav1.NamespaceDefault)
			}
			if err := ensureNamespace(ctx, cs, obj.GetNamespace()); err != nil {
				return nil, err
			}
			ri = dyn.Resource(m.Resource).Namespace(obj.GetNamespace())
		}
		applied, err := ri.Apply(ctx, obj.GetName(), &obj, metav1.ApplyOptions{FieldManager: "kubetest", Force: true})
		if err != nil {
			return nil, fmt.Errorf("applying %s %s/%s: %w", gvk.Kind, obj.GetNamespace(), obj.GetName(), err)
		}
		out = append(out, applied)
	}
}

// BinaryPath is where kube-apiserver is looked for: $KUBE_APISERVER, else the
// cache path of scripts/kube-apiserver.sh for this checkout's tools/kube/go.sum.
// The error says how to build it.
func BinaryPath() (string, error) {
	if p := os.Getenv(EnvAPIServer); p != "" {
		if err := toolcache.Executable(p); err != nil {
			return "", fmt.Errorf("$%s=%s: %w (unset it to use the cache, or build with `%s`)", EnvAPIServer, p, err, BuildCommand)
		}
		return p, nil
	}
	p, root, err := toolcache.Cached("kube-apiserver", "kube", EnvAPIServer)
	if err != nil {
		return "", err
	}
	if err := toolcache.Executable(p); err != nil {
		return "", fmt.Errorf("kube-apiserver is not built (%v): run `cd %s && %s` once "+
			"(a cold build takes 12-15 min on 2 cores; later runs reuse the cache), "+
			"or point $%s at a kube-apiserver v1.37 binary", err, root, BuildCommand, EnvAPIServer)
	}
	return p, nil
}

func etcdPath() (string, error) {
	if p := os.Getenv(EnvEtcd); p != "" {
		if err := toolcache.Executable(p); err != nil {
			return "", fmt.Errorf("$%s=%s: %w", EnvEtcd, p, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath("etcd"); err == nil {
		return p, nil
	}
	if toolcache.Executable("/usr/bin/etcd") == nil {
		return "/usr/bin/etcd", nil
	}
	return "", fmt.Errorf("etcd not found: install it with `apt-get install -y etcd-server` or set $%s", EnvEtcd)
}

func start(ctx context.Context) (c *Cluster, err error) {
	apiserverBin, err := BinaryPath()
	if err != nil {
		return nil, err
	}
	etcdBin, err := etcdPath()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kubetest-")
	if err != nil {
		return nil, fmt.Errorf("creating the work directory: %w", err)
	}
	c = &Cluster{dir: dir}
	defer func() {
		if err != nil {
			if serr := c.stop(); serr != nil {
				err = fmt.Errorf("%w (and stopping: %v)", err, serr)
			}
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()

	ports, err := freePorts(3)
	if err != nil {
		return c, err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	c.url = "https://127.0.0.1:" + strconv.Itoa(ports[2])

	// etcd fsyncs every write; on tmpfs that is free, which makes creating
	// thousands of pods take seconds rather than minutes.
	dataDir := filepath.Join(dir, "etcd")
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "kubetest-etcd-"); err == nil {
			dataDir = d
		}
	}
	c.etcd, err = startProcess(etcdBin, []string{
		"--name=kubetest",
		"--data-dir=" + dataDir,
		"--listen-client-urls=" + etcdURL,
		"--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=kubetest=" + peerURL,
		"--log-level=warn",
	}, filepath.Join(dir, "etcd.log"), dataDir)
	if err != nil {
		return c, err
	}
	if err := waitFor(ctx, c.etcd, "etcd", func(ctx context.Context) error {
		return httpOK(ctx, http.DefaultClient, etcdURL+"/health", "")
	}); err != nil {
		return c, err
	}

	c.adminToken, err = randomToken()
	if err != nil {
		return c, err
	}
	tokens := filepath.Join(dir, "tokens.csv")
	line := fmt.Sprintf("%s,%s,%s,\"system:masters\"\n", c.adminToken, AdminUser, AdminUser)
	if err := os.WriteFile(tokens, []byte(line), 0o600); err != nil {
		return c, fmt.Errorf("writing the token file: %w", err)
	}
	saKey, err := writeServiceAccountKey(filepath.Join(dir, "sa.key"))
	if err != nil {
		return c, err
	}
	certDir := filepath.Join(dir, "certs")
	c.apiserver, err = startProcess(apiserverBin, []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ports[2]),
		"--cert-dir=" + certDir, // self-signed serving certificate
		"--token-auth-file=" + tokens,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + saKey,
		"--service-account-signing-key-file=" + saKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		// No controller manager creates the "default" service account that
		// the ServiceAccount admission plugin wants for every pod.
		"--disable-admission-plugins=ServiceAccount",
		// Nothing else to reconcile on loopback.
		"--endpoint-reconciler-type=none",
		"--enable-priority-and-fairness=false",
		"--profiling=false",
		"--v=1",
	}, filepath.Join(dir, "kube-apiserver.log"), "")
	if err != nil {
		return c, err
	}
	if err := waitFor(ctx, c.apiserver, "kube-apiserver", func(ctx context.Context) error {
		ca, err := os.ReadFile(filepath.Join(certDir, "apiserver.crt")) // #nosec G304 -- reads a path the operator or the test harness named
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return errors.New("no certificate in apiserver.crt yet")
		}
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		defer client.CloseIdleConnections()
		if err := httpOK(ctx, client, c.url+"/readyz", c.adminToken); err != nil {
			return err
		}
		c.caData = ca
		return nil
	}); err != nil {
		return c, err
	}
	return c, nil
}

// stop ends kube-apiserver, then etcd, and removes their files.
func (c *Cluster) stop() error {
	var errs []error
	for _, p := range []*process{c.apiserver, c.etcd} {
		if p != nil {
			if err := p.stop(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if c.etcd != nil && c.etcd.extraDir != "" {
		errs = append(errs, os.RemoveAll(c.etcd.extraDir))
	}
	if c.dir != "" {
		errs = append(errs, os.RemoveAll(c.dir))
	}
	return errors.Join(errs...)
}

// process is a child whose output goes to a log file, quoted when it fails.
type process struct {
	name     string
	cmd      *exec.Cmd
	logPath  string
	extraDir string // removed after the process stops
	done     chan struct{}
	waitErr  error
}

func startProcess(bin string, args []string, logPath, extraDir string) (*process, error) {
	log, err := os.Create(logPath) // #nosec G304 -- reads a path the operator or the test harness named
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", logPath, err)
	}
	cmd := exec.Command(bin, args...) // #nosec G204 -- runs the binary the harness or operator was given, arguments as a list (no shell)
	cmd.Stdout, cmd.Stderr = log, log
	setDeathSignal(cmd)
	p := &process{name: filepath.Base(bin), cmd: cmd, logPath: logPath, extraDir: extraDir, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		_ = log.Close()
		close(p.done)
	}()
	return p, nil
}

// stop sends SIGTERM, then SIGKILL after stopTimeout. An exit caused by our
// signal is not an error.
func (p *process) stop() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s had exited before being stopped (%v):\n%s", p.name, p.waitErr, p.tail(20))
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	return nil
}

// tail returns the last n lines of the process log.
func (p *process) tail(n int) string {
	f, err := os.Open(p.logPath)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// waitFor polls ready until it succeeds, the process exits or ctx ends, and
// quotes the process log on failure.
func waitFor(ctx context.Context, p *process, what string, ready func(context.Context) error) error {
	var last error
	for {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		last = ready(cctx)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited while starting (%v); log %s:\n%s", what, p.waitErr, p.logPath, p.tail(30))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s (last: %v); log %s:\n%s", what, startTimeout, last, p.logPath, p.tail(30))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func httpOK(ctx context.Context, client *http.Client, url, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, bytes.TrimSpace(body))
	}
	return nil
}

// freePorts reserves n distinct loopback ports by listening on them together,
// then frees them for the children. Another process could take one in between;
// the child then fails to start and the error says so.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating a token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// writeServiceAccountKey writes a fresh RSA key (PKCS#1 PEM) that signs and
// verifies service-account tokens; kube-apiserver accepts the private key for
// both flags.
func writeServiceAccountKey(path string) (string, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", fmt.Errorf("generating the service-account key: %w", err)
	}
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(path, pemBytes, 0o600); err != nil {
		return "", fmt.Errorf("writing the service-account key: %w", err)
	}
	return path, nil
}
