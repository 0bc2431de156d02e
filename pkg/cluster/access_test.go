package cluster_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/substrate/density/pkg/cluster"
)

const kubeconfigTwoContexts = `apiVersion: v1
kind: Config
clusters:
- name: lab
  cluster: {server: "https://lab.example:6443"}
- name: prod
  cluster: {server: "https://prod.example:6443"}
users:
- name: u
  user: {token: "secret-token"}
contexts:
- name: lab
  context: {cluster: lab, user: u}
- name: prod
  context: {cluster: prod, user: u}
current-context: lab
`

// oneUserKubeconfig is a kubeconfig of one cluster c (its settings: the
// flow-map body after server) and one user u (the user's YAML, indented).
func oneUserKubeconfig(clusterExtra, user string) string {
	return `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://c.example"` + clusterExtra + `}
users:
- name: u
  user:` + user + `
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
`
}

var (
	kubeconfigExec = oneUserKubeconfig("", `
    exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: ["-c", "evil"], interactiveMode: Never}`)
	kubeconfigFileRef      = oneUserKubeconfig(", certificate-authority: /etc/passwd", " {token: t}")
	kubeconfigAuthProvider = oneUserKubeconfig("", `
    auth-provider: {name: oidc, config: {client-id: x}}`)
)

func kubeconfigUserFile(key, path string) string {
	return oneUserKubeconfig("", ` {`+key+`: "`+path+`"}`)
}

// In kubeconfig mode (the datasource's), a kubeconfig named by path is held
// to the pasted kubeconfig's rule: nothing that runs a program or reads
// another file. Auto mode (the CLI's --kubeconfig) keeps exec plugins.
func TestKubeconfigModeIsSelfContained(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	dir := t.TempDir()
	secret := filepath.Join(dir, "token")
	if err := os.WriteFile(secret, []byte("secret-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, text, wantErr string
	}{
		{"exec", kubeconfigExec, "exec credential plugin"},
		{"auth provider", kubeconfigAuthProvider, "auth-provider plugin"},
		{"token file", kubeconfigUserFile("tokenFile", secret), "refers to files"},
		{"client certificate file", kubeconfigUserFile("client-certificate", secret), "refers to files"},
		{"client key file", kubeconfigUserFile("client-key", secret), "refers to files"},
		{"CA file", kubeconfigFileRef, "CA file"},
	} {
		path := write(strings.ReplaceAll(tc.name, " ", "-")+".yaml", tc.text)
		for _, a := range []cluster.Access{
			{Mode: cluster.ModeKubeconfig, KubeconfigPath: path},
			{Mode: cluster.ModeKubeconfig, Kubeconfig: []byte(tc.text)},
		} {
			how := "by path"
			if a.KubeconfigPath == "" {
				how = "pasted"
			}
			t.Run(tc.name+" "+how, func(t *testing.T) {
				cfg, err := cluster.RESTConfig(a)
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("RESTConfig = %v, %v; want an error mentioning %q", cfg, err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "secret-token") {
					t.Fatalf("error leaks the token: %v", err)
				}
			})
		}
	}
	t.Run("$KUBECONFIG in kubeconfig mode", func(t *testing.T) {
		t.Setenv("KUBECONFIG", write("env-exec.yaml", kubeconfigExec))
		if _, err := cluster.RESTConfig(cluster.Access{Mode: cluster.ModeKubeconfig}); err == nil || !strings.Contains(err.Error(), "exec credential plugin") {
			t.Fatalf("err = %v, want the exec plugin refused", err)
		}
	})
	t.Run("the CLI keeps exec plugins", func(t *testing.T) {
		cfg, err := cluster.RESTConfig(cluster.Access{KubeconfigPath: write("cli-exec.yaml", kubeconfigExec)})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.ExecProvider == nil || cfg.ExecProvider.Command != "/bin/sh" {
			t.Fatalf("exec provider %+v, want /bin/sh", cfg.ExecProvider)
		}
	})
}

func TestRESTConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config")
	if err := os.WriteFile(path, []byte(kubeconfigTwoContexts), 0o600); err != nil {
		t.Fatal(err)
	}
	// Not inside a pod: in-cluster credentials are absent.
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	t.Setenv("KUBECONFIG", path)

	tests := []struct {
		name     string
		a        cluster.Access
		wantHost string
		wantErr  string // substring; "" means success
		timeout  time.Duration
	}{
		{name: "auto falls back to $KUBECONFIG", a: cluster.Access{}, wantHost: "https://lab.example:6443", timeout: 5 * time.Second},
		{name: "auto with a context", a: cluster.Access{Context: "prod"}, wantHost: "https://prod.example:6443", timeout: 5 * time.Second},
		{name: "kubeconfig path and context", a: cluster.Access{Mode: "kubeconfig", KubeconfigPath: path, Context: "prod", Timeout: 2 * time.Second},
			wantHost: "https://prod.example:6443", timeout: 2 * time.Second},
		{name: "kubeconfig unknown context", a: cluster.Access{Mode: "kubeconfig", KubeconfigPath: path, Context: "nope"}, wantErr: "nope"},
		{name: "kubeconfig missing file", a: cluster.Access{Mode: "kubeconfig", KubeconfigPath: filepath.Join(dir, "absent")}, wantErr: "loading kubeconfig"},
		{name: "pasted kubeconfig, current context", a: cluster.Access{Mode: "kubeconfig", Kubeconfig: []byte(kubeconfigTwoContexts)},
			wantHost: "https://lab.example:6443", timeout: 5 * time.Second},
		{name: "pasted kubeconfig, chosen context", a: cluster.Access{Mode: "kubeconfig", Kubeconfig: []byte(kubeconfigTwoContexts), Context: "prod"},
			wantHost: "https://prod.example:6443", timeout: 5 * time.Second},
		{name: "pasted kubeconfig with exec refused", a: cluster.Access{Mode: "kubeconfig", Kubeconfig: []byte(kubeconfigExec)}, wantErr: "exec credential plugin"},
		{name: "pasted kubeconfig with file reference refused", a: cluster.Access{Mode: "kubeconfig", Kubeconfig: []byte(kubeconfigFileRef)}, wantErr: "CA file"},
		{name: "pasted garbage", a: cluster.Access{Mode: "kubeconfig", Kubeconfig: []byte("secret-token: [")}, wantErr: "not a valid kubeconfig"},
		{name: "token", a: cluster.Access{Mode: "token", URL: "https://10.0.0.1:6443", Token: "secret-token", CACert: []byte("pem")},
			wantHost: "https://10.0.0.1:6443", timeout: 5 * time.Second},
		{name: "token without URL", a: cluster.Access{Mode: "token", Token: "secret-token"}, wantErr: "API URL"},
		{name: "token with a bad URL", a: cluster.Access{Mode: "token", URL: "ftp://x", Token: "secret-token"}, wantErr: "not an http(s) URL"},
		{name: "token without token", a: cluster.Access{Mode: "token", URL: "https://x"}, wantErr: "bearer token"},
		{name: "in-cluster outside a pod", a: cluster.Access{Mode: "inCluster"}, wantErr: "in-cluster"},
		{name: "unknown mode", a: cluster.Access{Mode: "magic"}, wantErr: "unknown Kubernetes access mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := cluster.RESTConfig(tt.a)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "secret-token") {
					t.Fatalf("error leaks the token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tt.wantHost {
				t.Errorf("host %q, want %q", cfg.Host, tt.wantHost)
			}
			if cfg.Timeout != tt.timeout {
				t.Errorf("timeout %v, want %v", cfg.Timeout, tt.timeout)
			}
			if cfg.BearerToken != "secret-token" {
				t.Errorf("token %q not carried", cfg.BearerToken)
			}
			if cfg.QPS < 50 {
				t.Errorf("QPS %v throttles pagination", cfg.QPS)
			}
		})
	}
	if _, err := cluster.RESTConfig(cluster.Access{Mode: cluster.ModeOff, KubeconfigPath: "/nonexistent"}); !errors.Is(err, cluster.ErrOff) {
		t.Errorf("off: %v", err)
	}
}
